package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.engine.wake.HotList;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The three pop routes. A queue-level pop registers the group on first contact, takes partitions
 * from the hot list (marked by pushes and lease-releasing acks) and, when that cannot be trusted to be
 * complete, from a database scan of candidates (pending, lease-free, random order); it claims them
 * one after another with a shared budget and one lease id. Each claim is a single statement
 * ({@code log_pop_v1}) that never waits on a lock. A long-poll parks on the in-process wake hub
 * (no connection held) between attempts; commits here or on a peer broker wake one parked pop per
 * group, and it re-checks at most once a second otherwise.
 *
 * <p>Conflation (broker/DESIGN.md, Pop path) is a policy of the group on a queue, fixed by the pop that registers the
 * group: such a group is served one message per partition, the newest, whose ack retires the
 * partition's whole backlog. The stored policy wins over what a pop asks for; the answer says so.
 */
public final class PopService {
    /** How long a parked pop waits before re-checking without a wake; also how stale a ring's last scan may be. */
    static final long IDLE_RECHECK_MS = 1000;

    /** Where a pop takes from: a queue, one of its partitions, or (discovery) a namespace and task. */
    public record Source(UUID tenant,
                         String queue,          // null on the discovery route
                         String partition,      // non-null on the pinned route
                         String namespace,
                         String task) {
    }

    /** How much one pop takes: {@code batch} is 200 when not given; {@code partitions} null when not given. */
    public record Sizing(int batch, boolean batchGiven, Integer partitions, boolean autopilot) {
    }

    /** How the messages are handed over: acked at once or leased, and how long to wait for some. */
    public record Delivery(boolean autoAck, int leaseSeconds, boolean waitForMessages, long timeoutMs) {
    }

    /** Whose cursor moves: the group, where a new group starts, and the conflation asked (null: not given). */
    public record Subscription(String consumerGroup, String mode, Instant from, Boolean conflation) {
    }

    /** One pop, its parameters in four named groups; the accessors below read through them. */
    public record Request(Source source, Sizing sizing, Delivery delivery, Subscription subscription) {
        /** The same pop with the knobs autopilot chose. */
        Request sized(PopAutopilot.Plan plan) {
            return new Request(source, new Sizing(plan.batch(), true, plan.partitions(), sizing.autopilot()),
                    delivery, subscription);
        }

        public UUID tenant() {
            return source.tenant();
        }

        public String queue() {
            return source.queue();
        }

        public String partition() {
            return source.partition();
        }

        public String namespace() {
            return source.namespace();
        }

        public String task() {
            return source.task();
        }

        public int batch() {
            return sizing.batch();
        }

        public boolean batchGiven() {
            return sizing.batchGiven();
        }

        public Integer partitions() {
            return sizing.partitions();
        }

        public boolean autopilot() {
            return sizing.autopilot();
        }

        public boolean autoAck() {
            return delivery.autoAck();
        }

        public int leaseSeconds() {
            return delivery.leaseSeconds();
        }

        public boolean waitForMessages() {
            return delivery.waitForMessages();
        }

        public long timeoutMs() {
            return delivery.timeoutMs();
        }

        public String consumerGroup() {
            return subscription.consumerGroup();
        }

        public String subscriptionMode() {
            return subscription.mode();
        }

        public Instant subscriptionFrom() {
            return subscription.from();
        }

        public Boolean conflation() {
            return subscription.conflation();
        }

        /**
         * The most partitions one call claims: the parameter (default 1, at most 0 = no cap). A
         * conflating pop takes one message per partition, so its cap defaults to the batch and is
         * held to 1..64, the reference's bound on one conflating answer.
         */
        int partitionCap(boolean conflating) {
            Integer partitions = sizing.partitions();
            if (source.partition() != null) {
                return Integer.MAX_VALUE;
            }
            if (conflating) {
                return Math.clamp(partitions == null ? sizing.batch() : partitions, 1, 64);
            }
            int p = partitions == null ? 1 : partitions;
            return p <= 0 ? Integer.MAX_VALUE : p;
        }
    }

    public record Message(UUID id, String transactionId, UUID traceId, byte[] data, String producerSub,
                          Instant createdAt, UUID partitionId, String partition, String queue, int deliveryAttempt) {
    }

    /**
     * {@code conflation}: the group's policy conflated this answer; {@code conflationConflict}: the
     * pop asked for another policy than the stored one, which was applied instead; {@code autopilot}:
     * the knobs the broker chose for a pop that delegated them, else null.
     */
    public record Result(String queue, String partition, UUID partitionId, String leaseId, String consumerGroup,
                         List<Message> messages, int partitionsClaimed, boolean conflation,
                         boolean conflationConflict, PopAutopilot.Plan autopilot) {
        public Result(String queue, String partition, UUID partitionId, String leaseId, String consumerGroup,
                      List<Message> messages, int partitionsClaimed) {
            this(queue, partition, partitionId, leaseId, consumerGroup, messages, partitionsClaimed, false, false, null);
        }

        Result withAutopilot(PopAutopilot.Plan plan) {
            return new Result(queue, partition, partitionId, leaseId, consumerGroup, messages, partitionsClaimed,
                    conflation, conflationConflict, plan);
        }

        public boolean isEmpty() {
            return messages.isEmpty();
        }
    }

    private final Database database;
    private final QueueCatalog catalog;
    private final PayloadCipher cipher;
    private final WakeHub wake;
    private final PopAutopilot autopilot;
    private final PopPolicies policies = new PopPolicies();
    private final PopFillHold fillHold;

    public PopService(Database database, QueueCatalog catalog, PayloadCipher cipher, WakeHub wake,
                      PopAutopilot autopilot) {
        this.database = database;
        this.catalog = catalog;
        this.cipher = cipher;
        this.wake = wake;
        this.autopilot = autopilot;
        this.fillHold = new PopFillHold(database, catalog, wake, policies);
    }

    /** Forgets that the group registered on the queue, so its next pop registers it again (after a group delete). */
    public void forgetGroup(UUID queueId, String group) {
        policies.forget(queueId, group);
    }

    public Result pop(Request r) throws SQLException, InterruptedException {
        boolean queueLevel = r.queue() != null && r.partition() == null;
        // The reference's scope: a queue-level pop of a named group that does not ask for conflation
        // (whose partitions are its message budget) and leaves at least one knob to the broker.
        boolean piloted = queueLevel && r.autopilot() && autopilot.active()
                && !Tenants.QUEUE_MODE.equals(r.consumerGroup()) && !Boolean.TRUE.equals(r.conflation())
                && (!r.batchGiven() || r.partitions() == null);
        if (!piloted) {
            return pop(r, queueLevel, null);
        }
        String lane = r.tenant() + "/" + r.queue() + "/" + r.consumerGroup();
        try (PopAutopilot.Live ignored = autopilot.enter(lane)) {
            return pop(r, queueLevel, lane);
        }
    }

    /** @param lane the autopilot lane of a pop that delegated its sizing, else null */
    private Result pop(Request asked, boolean queueLevel, String lane) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + Math.max(asked.timeoutMs(), 0) * 1_000_000L;
        while (true) {
            long seen = asked.queue() == null ? wake.tenantVersion(asked.tenant())
                    : wake.version(asked.tenant(), asked.queue());
            HotList.Ring ring = queueLevel ? wake.hotList().ring(asked.tenant(), asked.queue(), asked.consumerGroup())
                    : null;
            PopAutopilot.Plan plan = lane == null ? null : autopilot.plan(lane, ring.size(), asked.partitions(),
                    asked.batchGiven() ? asked.batch() : null);
            if (plan != null && autopilot.shadow()) {
                // Learned and reported, not applied: the pop keeps its own knobs (partitions default 1).
                autopilot.reportShadow(lane, plan, asked.partitions() == null ? 1 : asked.partitions(), asked.batch());
                plan = null;
            }
            Request r = plan == null ? asked : asked.sized(plan);
            if (queueLevel) {
                fillHold.hold(r, deadline);
            }
            Result result = attempt(r, ring);
            if (!result.isEmpty() || !r.waitForMessages() || wake.closed()) {
                if (!result.isEmpty() && queueLevel && ring.size() > 0) {
                    // This pop was likely the one woken for its group: pass the wake on for what is left.
                    wake.wakeGroup(r.tenant(), r.queue(), r.consumerGroup());
                }
                return plan == null ? result : result.withAutopilot(plan);
            }
            long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                return result;
            }
            long park = Math.min(leftMs, IDLE_RECHECK_MS);
            if (r.queue() == null) {
                wake.awaitTenantChange(r.tenant(), seen, park);
            } else if (queueLevel) {
                wake.awaitChange(r.tenant(), r.queue(), r.consumerGroup(), seen, park);
            } else {
                wake.awaitChange(r.tenant(), r.queue(), seen, park);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("pop interrupted");
            }
        }
    }

    /** @param ring the hot list of a queue-level pop, else null */
    private Result attempt(Request r, HotList.Ring ring) throws SQLException {
        String leaseId = r.autoAck() ? "" : UuidV7.next().toString();
        Claim claim = new Claim(r, leaseId);
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (r.queue() == null) {
                for (LogStore.QueueRef q : LogStore.queuesMatching(c, r.tenant(), r.namespace(), r.task())) {
                    claim.policy(policies.registered(c, r, q.id()));
                    claimFromScan(c, r, q.id(), q.name(), claim, null);
                    if (claim.done()) {
                        break;
                    }
                }
            } else {
                LogStore.Provisioned q = catalog.resolveQueue(c, r.tenant(), r.queue());
                if (r.partition() != null) {
                    claim.policy(policies.pinned(c, r, q.queueId()));
                    UUID pid = LogStore.partitionId(c, q.queueId(), r.partition());
                    if (pid != null) {
                        claim.tryPartition(c, r.queue(), pid, r.partition());
                    }
                } else {
                    claim.policy(policies.registered(c, r, q.queueId()));
                    claimQueue(c, r, q.queueId(), ring, claim);
                }
            }
        }
        // A discovery pop spans queues: the top-level queue is "", as the reference broker answers
        // (its 1.x renderer leaves it empty; the per-message partitionId is what an ack needs).
        return claim.result(r.queue() == null ? "" : r.queue());
    }

    /**
     * A queue-level pop: the hot list's marked partitions first (oldest mark first, a few at a time),
     * then the database scan when the ring cannot be trusted to be complete. A pop that answers at
     * once (no wait) always scans before answering empty, so its answer is exact; a long-poll scans
     * when the ring is dirty or its last scan was cut at the limit, and otherwise lets one scan per
     * ring and second stand for all of the ring's pops (the idle re-check). Only one long-poll scans
     * a ring at a time; the others park and are woken for what it leaves in the ring.
     */
    private void claimQueue(Connection c, Request r, UUID queueId, HotList.Ring ring, Claim claim) throws SQLException {
        int cap = claim.cap();
        int checkout = (int) Math.max(2, Math.min((long) cap * 2, 64));
        while (!claim.done()) {
            List<String> marked = ring.take(checkout);
            if (marked.isEmpty()) {
                break;
            }
            for (int i = 0; i < marked.size(); i++) {
                if (claim.done()) {
                    marked.subList(i, marked.size()).forEach(ring::add);
                    break;
                }
                String name = marked.get(i);
                try {
                    UUID pid = markedPartitionId(c, r, queueId, name);
                    if (pid != null && claim.tryMarked(c, r.queue(), pid, name) && r.autoAck() && claim.remaining <= 0) {
                        ring.add(name); // No lease holds it back: what the budget left is claimable now.
                    }
                } catch (SQLException | RuntimeException e) {
                    marked.subList(i, marked.size()).forEach(ring::add); // untried: still believed pending
                    throw e;
                }
            }
        }
        if (claim.done() || (claim.claimed > 0 && r.waitForMessages())) {
            return;
        }
        boolean mustScan = !r.waitForMessages() || ring.needsScan()
                || ring.sinceLastScanNanos() >= IDLE_RECHECK_MS * 1_000_000L;
        if (!mustScan) {
            return;
        }
        boolean owns = ring.beginScan();
        if (!owns && r.waitForMessages()) {
            return; // Another pop is scanning this ring; it leaves what it finds in the ring and wakes us.
        }
        long epoch = ring.scanEpoch();
        try {
            List<String> unclaimed = new ArrayList<>();
            boolean full = claimFromScan(c, r, queueId, r.queue(), claim, unclaimed);
            ring.endScan(epoch, unclaimed, full, owns);
            if (!unclaimed.isEmpty()) {
                wake.wakeGroup(r.tenant(), r.queue(), r.consumerGroup());
            }
        } catch (SQLException | RuntimeException e) {
            ring.abortScan(owns);
            throw e;
        }
    }

    /** The id of a marked partition: from the catalog when this broker pushed to it lately, else looked up. */
    private UUID markedPartitionId(Connection c, Request r, UUID queueId, String name) throws SQLException {
        LogStore.Provisioned cached = catalog.cached(r.tenant(), r.queue(), name);
        return cached != null ? cached.partitionId() : LogStore.partitionId(c, queueId, name);
    }

    /**
     * Scans the queue's candidates (pending, lease-free, random order) and claims them in turn.
     * Candidates not tried go to {@code unclaimed} (when given); returns whether the scan was cut at
     * its limit.
     */
    private boolean claimFromScan(Connection c, Request r, UUID queueId, String queueName, Claim claim,
                                  List<String> unclaimed) throws SQLException {
        int cap = claim.cap();
        int limit = cap >= 128 ? 512 : Math.max(64, Math.min(cap * 4, 512));
        List<LogStore.Candidate> candidates = LogStore.candidates(c, queueId, r.consumerGroup(), limit);
        for (int i = 0; i < candidates.size(); i++) {
            LogStore.Candidate cand = candidates.get(i);
            if (claim.done()) {
                if (unclaimed != null) {
                    candidates.subList(i, candidates.size()).forEach(x -> unclaimed.add(x.partitionName()));
                }
                break;
            }
            claim.tryPartition(c, queueName, cand.partitionId(), cand.partitionName());
        }
        return candidates.size() >= limit;
    }

    /** The state of one pop call across partitions: budget left, partitions that yielded, messages. */
    private final class Claim {
        private final Request request;
        private final String leaseId;
        private final List<Message> messages = new ArrayList<>();
        private int remaining;
        private int claimed;
        private String firstPartition;
        private UUID firstPartitionId;
        /** The policy of the queue being claimed from, and whether any queue of this call conflated or disagreed. */
        private boolean conflating;
        private boolean anyConflating;
        private boolean conflict;

        Claim(Request request, String leaseId) {
            this.request = request;
            this.leaseId = leaseId;
            this.remaining = Math.max(request.batch(), 1);
        }

        /** The group's policy on the queue claimed from next. */
        void policy(boolean conflation) {
            conflating = conflation;
            anyConflating |= conflation;
            conflict |= request.conflation() != null && request.conflation() != conflation;
        }

        int cap() {
            return request.partitionCap(anyConflating);
        }

        boolean done() {
            return remaining <= 0 || claimed >= cap();
        }

        /**
         * A claim on a partition taken from the hot list, which may have been deleted since it was
         * marked: that reads as nothing to claim. Returns whether it yielded messages.
         */
        boolean tryMarked(Connection c, String queue, UUID partitionId, String partitionName) throws SQLException {
            int before = claimed;
            try {
                tryPartition(c, queue, partitionId, partitionName);
            } catch (SQLException e) {
                if (!SqlStates.isRowGone(e)) {
                    throw e;
                }
                catalog.evict(request.tenant(), queue);
            }
            return claimed > before;
        }

        void tryPartition(Connection c, String queue, UUID partitionId, String partitionName) throws SQLException {
            List<LogStore.ClaimedSegment> segments = LogStore.pop(c, new LogStore.PopQuery(partitionId,
                    request.consumerGroup(), remaining, request.leaseSeconds(), leaseId, request.autoAck(),
                    request.subscriptionMode(), request.subscriptionFrom(), conflating));
            if (segments.isEmpty()) {
                return;
            }
            for (LogStore.ClaimedSegment s : segments) {
                for (Frame f : SegmentCodec.decode(s.blob(), s.startOff(), s.take())) {
                    byte[] data = cipher.payloadOf(f);
                    messages.add(new Message(f.messageId(), f.transactionId(), f.traceId(), data, f.producerSub(),
                            s.createdAt(), partitionId, partitionName, queue, s.attempt()));
                }
                remaining -= s.take();
            }
            if (claimed == 0) {
                firstPartition = partitionName;
                firstPartitionId = partitionId;
            }
            claimed++;
        }

        Result result(String queue) {
            return new Result(queue, firstPartition, firstPartitionId, leaseId, request.consumerGroup(),
                    List.copyOf(messages), claimed, anyConflating, conflict, null);
        }
    }
}
