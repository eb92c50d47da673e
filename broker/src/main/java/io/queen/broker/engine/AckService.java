package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code POST /ack} and {@code /ack/batch}: items grouped by (partitionId, leaseId), each group
 * resolved in its own transaction: lock the cursor row, resolve hashes, decide, write. A dead
 * letter is decoded from its segment and filed in the same transaction. The common group (all
 * completed, in order, under its lease) is one self-committing statement instead.
 */
public final class AckService {
    public record Item(String transactionId, UUID partitionId, AckDecision.Status status, String leaseId, String error) {
    }

    /**
     * {@code wakeQueue}/{@code wakePartition}: set (internal) when this ack released the lease and
     * messages wait behind the new cursor, naming where.
     */
    public record Result(int index, String transactionId, AckOutcome outcome, boolean leaseReleased,
                         boolean dlq, String wakeQueue, String wakePartition) {
        public Result(int index, String transactionId, AckOutcome outcome, boolean leaseReleased, boolean dlq) {
            this(index, transactionId, outcome, leaseReleased, dlq, null, null);
        }

        public boolean success() {
            return outcome.success();
        }

        public String error() {
            return outcome.error();
        }

        /** A success that changed nothing (the message was already below the cursor). */
        public boolean noop() {
            return outcome == AckOutcome.ALREADY_DONE;
        }
    }

    private final Database database;
    private final LongAdder oneStatementAcks = new LongAdder();
    /** Told after a commit released a lease on a partition where messages wait behind the cursor: they are claimable again. */
    private final CommitListener releases;

    public AckService(Database database) {
        this(database, CommitListener.NONE);
    }

    public AckService(Database database, CommitListener releases) {
        this.database = database;
        this.releases = releases;
    }

    public List<Result> ack(UUID tenant, String group, List<Item> items) throws SQLException {
        Result[] results = new Result[items.size()];
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            groups.computeIfAbsent(it.partitionId() + "|" + (it.leaseId() == null ? "" : it.leaseId()),
                    k -> new ArrayList<>()).add(i);
        }
        try (Connection c = database.connection()) {
            for (List<Integer> idx : groups.values()) {
                if (ackedInOneStatement(c, tenant, group, items, idx, results)) {
                    continue;
                }
                c.setAutoCommit(false);
                try {
                    List<Result> r = ackGroup(c, tenant, group, items, idx);
                    c.commit();
                    Result wake = null;
                    for (Result res : r) {
                        results[res.index()] = res;
                        wake = res.wakeQueue() != null ? res : wake;
                    }
                    if (wake != null) {
                        releases.committed(tenant, wake.wakeQueue(), wake.wakePartition());
                    }
                } catch (SQLException | RuntimeException e) {
                    Database.rollbackAfter(c, e);
                    throw e;
                } finally {
                    Database.restoreAutoCommit(c);
                }
            }
        }
        return List.of(results);
    }

    /**
     * The ack a consumer sends after each pop (all completed, under its lease, in delivery order)
     * as one self-committing statement, log_ack_completed_v1. False when the group is not such an
     * ack: nothing was written and the general path decides.
     */
    private boolean ackedInOneStatement(Connection c, UUID tenant, String group, List<Item> items, List<Integer> idx,
                                        Result[] results) throws SQLException {
        Item first = items.get(idx.get(0));
        if (first.leaseId() == null || first.leaseId().isEmpty()
                || idx.stream().anyMatch(i -> items.get(i).status() != AckDecision.Status.COMPLETED)) {
            return false;
        }
        c.setAutoCommit(true);
        List<String> txns = idx.stream().map(i -> items.get(i).transactionId()).toList();
        LogStore.CompletedAck done = LogStore.ackCompleted(c, first.partitionId(), group, TxnHash.concat(txns), tenant,
                first.leaseId());
        if (!done.applied()) {
            return false;
        }
        oneStatementAcks.increment();
        for (int i : idx) {
            results[i] = new Result(i, items.get(i).transactionId(), AckOutcome.APPLIED, done.released(), false,
                    done.more() ? done.queueName() : null, done.more() ? done.partitionName() : null);
        }
        if (done.more()) {
            releases.committed(tenant, done.queueName(), done.partitionName());
        }
        return true;
    }

    /** Ack groups written by {@link #ackedInOneStatement}; tests read it to know which path ran. */
    long oneStatementAcks() {
        return oneStatementAcks.sum();
    }

    /** Resolves and applies one group inside the caller's transaction, validating the items' own lease id. */
    List<Result> ackGroup(Connection c, UUID tenant, String group, List<Item> items, List<Integer> idx)
            throws SQLException {
        return ackGroup(c, tenant, group, items, idx, false);
    }

    /**
     * @param requireLiveLease with no lease id on the items, still demand a live lease and bound the
     *                         ack by its batch (the transaction route's "current holder" resolution)
     */
    List<Result> ackGroup(Connection c, UUID tenant, String group, List<Item> items, List<Integer> idx,
                          boolean requireLiveLease) throws SQLException {
        Item first = items.get(idx.get(0));
        List<String> txns = idx.stream().map(i -> items.get(i).transactionId()).toList();
        String leaseId = first.leaseId() == null ? "" : first.leaseId();
        boolean leased = !leaseId.isEmpty() || requireLiveLease;
        LogStore.AckState s = LogStore.resolveAck(c, first.partitionId(), group, TxnHash.concat(txns), tenant, leased);
        AckOutcome groupError = !s.consumerFound() ? AckOutcome.CONSUMER_NOT_FOUND
                : !s.tenantOk() ? AckOutcome.FOREIGN_PARTITION
                : leased && (!s.lease().live() || (!leaseId.isEmpty() && !leaseId.equals(s.lease().workerId())))
                ? AckOutcome.INVALID_LEASE
                : null;
        List<Result> out = new ArrayList<>(idx.size());
        if (groupError != null) {
            for (int i : idx) {
                out.add(new Result(i, items.get(i).transactionId(), groupError, false, false));
            }
            return out;
        }
        List<AckDecision.Item> decisionItems = new ArrayList<>(idx.size());
        for (int k = 0; k < idx.size(); k++) {
            Item it = items.get(idx.get(k));
            decisionItems.add(new AckDecision.Item(it.status(), s.resolved().spanOffsets()[k],
                    Boolean.TRUE.equals(s.resolved().belowCursor()[k]), it.error()));
        }
        LogStore.AckLease lease = s.lease();
        LogStore.AckCursor cursor = s.cursor();
        Long liveBatchEnd = lease.live() ? lease.batchEnd() : null;
        long upper = leased ? lease.batchEnd() : cursor.lastOffset();
        AckDecision.Plan plan = AckDecision.decide(cursor.committed(), upper, liveBatchEnd,
                lease.live() && lease.conflated(), lease.batchRetryCount(), s.policy().retryLimit(),
                s.policy().dlqEnabled(), decisionItems);
        LogStore.applyAck(c, first.partitionId(), group, plan.committed(), plan.release(), plan.retry());
        if (plan.poisonOffset() != null) {
            deadLetter(c, first.partitionId(), group, plan, lease.batchRetryCount());
        }
        // Only then is the released partition worth a parked pop's claim; otherwise the claim finds nothing.
        boolean more = plan.release() && plan.committed() < cursor.lastOffset();
        for (int k = 0; k < idx.size(); k++) {
            AckDecision.ItemOutcome o = plan.items().get(k);
            out.add(new Result(idx.get(k), items.get(idx.get(k)).transactionId(), o.outcome(),
                    o.outcome() == AckOutcome.APPLIED && plan.release(), o.dlq(),
                    more ? cursor.queueName() : null, more ? cursor.partitionName() : null));
        }
        return out;
    }

    private static void deadLetter(Connection c, UUID partitionId, String group, AckDecision.Plan plan, int retryCount)
            throws SQLException {
        long off = plan.poisonOffset();
        LogStore.Segment seg = LogStore.segmentCovering(c, partitionId, off);
        UUID messageId = null;
        String txn = null;
        String payload = null;
        if (seg != null) {
            Frame f = SegmentCodec.decode(seg.blob(), (int) (off - seg.baseOffset()), 1).get(0);
            messageId = f.messageId();
            txn = f.transactionId();
            payload = f.isNullPayload() ? "null" : new String(f.payload(), StandardCharsets.UTF_8);
        }
        LogStore.fileDeadLetter(c, partitionId, group, off, messageId, txn, payload, plan.deadLetterError(), retryCount,
                plan.fileDeadLetter());
    }

    /** A lease extension: how many cursors the lease held were renewed, and until when (null: none). */
    public record Renewal(int renewed, Instant expiresAt) {
    }

    public Renewal renew(UUID tenant, String leaseId, int seconds) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            LogStore.Renewal r = LogStore.renewLease(c, leaseId, seconds, tenant);
            return new Renewal(r.renewed(), r.expiresAt());
        }
    }
}
