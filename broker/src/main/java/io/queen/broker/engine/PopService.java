package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The three pop routes. A queue-level pop registers the group on first contact, lists candidate
 * partitions (pending, lease-free, random order) and claims them one after another with a shared
 * budget and one lease id. Each claim is a single statement ({@code log_pop_v1}) that never waits
 * on a lock. A long-poll parks on the in-process wake hub (no connection held) between attempts;
 * commits here or on a peer broker wake it, and it re-checks the database at most once a second
 * otherwise.
 */
public final class PopService {
    /** How long a parked pop waits before re-checking the database without a wake. */
    static final long IDLE_RECHECK_MS = 1000;

    public record Request(
            UUID tenant,
            String queue,          // null on the discovery route
            String partition,      // non-null on the pinned route
            String namespace,
            String task,
            int batch,
            int partitions,
            boolean autoAck,
            boolean waitForMessages,
            long timeoutMs,
            int leaseSeconds,
            String consumerGroup,
            String subscriptionMode,
            Instant subscriptionFrom) {
    }

    public record Message(UUID id, String transactionId, UUID traceId, byte[] data, String producerSub,
                          Instant createdAt, UUID partitionId, String partition, String queue, int deliveryAttempt) {
    }

    public record Result(String queue, String partition, UUID partitionId, String leaseId, String consumerGroup,
                         List<Message> messages, int partitionsClaimed) {
        public boolean isEmpty() {
            return messages.isEmpty();
        }
    }

    private final Database database;
    private final QueueCatalog catalog;
    private final PayloadCipher cipher;
    private final WakeHub wake;
    private final Set<String> registeredGroups = ConcurrentHashMap.newKeySet();

    public PopService(Database database, QueueCatalog catalog, PayloadCipher cipher, WakeHub wake) {
        this.database = database;
        this.catalog = catalog;
        this.cipher = cipher;
        this.wake = wake;
    }

    /** Forgets that the group registered on the queue, so its next pop registers it again (after a group delete). */
    public void forgetGroup(UUID queueId, String group) {
        registeredGroups.remove(queueId + "/" + group);
    }

    public Result pop(Request r) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + Math.max(r.timeoutMs(), 0) * 1_000_000L;
        while (true) {
            long seen = r.queue() == null ? wake.tenantVersion(r.tenant()) : wake.version(r.tenant(), r.queue());
            Result result = attempt(r);
            if (!result.isEmpty() || !r.waitForMessages()) {
                return result;
            }
            long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                return result;
            }
            long park = Math.min(leftMs, IDLE_RECHECK_MS);
            if (r.queue() == null) {
                wake.awaitTenantChange(r.tenant(), seen, park);
            } else {
                wake.awaitChange(r.tenant(), r.queue(), seen, park);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("pop interrupted");
            }
        }
    }

    private Result attempt(Request r) throws SQLException {
        String leaseId = r.autoAck() ? "" : UuidV7.next().toString();
        Claim claim = new Claim(r, leaseId);
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (r.queue() == null) {
                for (LogStore.QueueRef q : LogStore.queuesMatching(c, r.tenant(), r.namespace(), r.task())) {
                    claimQueue(c, r, q.id(), q.name(), claim);
                    if (claim.done()) {
                        break;
                    }
                }
            } else {
                LogStore.Provisioned q = catalog.resolve(c, r.tenant(), r.queue(), null);
                if (r.partition() != null) {
                    UUID pid = LogStore.partitionId(c, q.queueId(), r.partition());
                    if (pid != null) {
                        claim.tryPartition(c, r.queue(), pid, r.partition());
                    }
                } else {
                    claimQueue(c, r, q.queueId(), r.queue(), claim);
                }
            }
        }
        return claim.result(r.queue() == null ? "" : r.queue());
    }

    private void claimQueue(Connection c, Request r, UUID queueId, String queueName, Claim claim) throws SQLException {
        if (!Tenants.QUEUE_MODE.equals(r.consumerGroup())
                && registeredGroups.add(queueId + "/" + r.consumerGroup())) {
            LogStore.registerGroup(c, r.tenant(), queueId, r.consumerGroup(), r.subscriptionMode(), r.subscriptionFrom());
        }
        int cap = r.partitions() <= 0 ? Integer.MAX_VALUE : r.partitions();
        int limit = cap >= 128 ? 512 : Math.max(64, Math.min(cap * 4, 512));
        for (LogStore.Candidate cand : LogStore.candidates(c, queueId, r.consumerGroup(), limit)) {
            claim.tryPartition(c, queueName, cand.partitionId(), cand.partitionName());
            if (claim.done()) {
                return;
            }
        }
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

        Claim(Request request, String leaseId) {
            this.request = request;
            this.leaseId = leaseId;
            this.remaining = Math.max(request.batch(), 1);
        }

        boolean done() {
            int cap = request.partitions() <= 0 || request.partition() != null ? Integer.MAX_VALUE : request.partitions();
            return remaining <= 0 || claimed >= cap;
        }

        void tryPartition(Connection c, String queue, UUID partitionId, String partitionName) throws SQLException {
            List<LogStore.ClaimedSegment> segments = LogStore.pop(c, partitionId, request.consumerGroup(), remaining,
                    request.leaseSeconds(), leaseId, request.autoAck(), request.subscriptionMode(),
                    request.subscriptionFrom());
            if (segments.isEmpty()) {
                return;
            }
            for (LogStore.ClaimedSegment s : segments) {
                for (Frame f : SegmentCodec.decode(s.blob(), s.startOff(), s.take())) {
                    byte[] data = f.encrypted() || PayloadCipher.looksLikeEnvelope(f.payload())
                            ? cipher.decryptIfEnvelope(f.payload()) : f.payload();
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
                    List.copyOf(messages), claimed);
        }
    }
}
