package io.queen.broker.engine;

import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.wake.HotList;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
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
 * <p>This class is the use case: the routes, autopilot's sizing and the long-poll loop. Beside it,
 * {@link PopPolicies} knows each group's registration and conflation policy, {@link PopFillHold}
 * waits for a batch to fill (minPopWaitTime), {@link PopQueueWalk} chooses a queue's partitions
 * (hot list, then candidate scan) and {@link PopClaim} claims them for one call.
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
    private final PopPolicies policies;
    private final PopFillHold fillHold;
    private final PopQueueWalk walk;

    public PopService(Database database, QueueCatalog catalog, PayloadCipher cipher, WakeHub wake,
                      PopAutopilot autopilot) {
        this.database = database;
        this.catalog = catalog;
        this.cipher = cipher;
        this.wake = wake;
        this.autopilot = autopilot;
        this.policies = new PopPolicies(wake.ticker());
        this.fillHold = new PopFillHold(database, catalog, wake, policies);
        this.walk = new PopQueueWalk(catalog, wake);
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
        long deadline = wake.ticker().nanoTime() + Math.max(asked.timeoutMs(), 0) * 1_000_000L;
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
            long leftMs = (deadline - wake.ticker().nanoTime()) / 1_000_000L;
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
        PopClaim claim = new PopClaim(r, cipher);
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (r.queue() == null) {
                for (LogStore.QueueRef q : LogStore.queuesMatching(c, r.tenant(), r.namespace(), r.task())) {
                    claim.policy(policies.registered(c, r, q.id()));
                    walk.claimFromScan(c, r, q.id(), q.name(), claim, null);
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
                    walk.claimQueue(c, r, q.queueId(), ring, claim);
                }
            }
        }
        // A discovery pop spans queues: the top-level queue is "", as the reference broker answers
        // (its 1.x renderer leaves it empty; the per-message partitionId is what an ack needs).
        return claim.result(r.queue() == null ? "" : r.queue());
    }
}
