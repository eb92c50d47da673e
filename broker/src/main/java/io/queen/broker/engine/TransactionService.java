package io.queen.broker.engine;

import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * {@code POST /transaction}: pushes and acks in one PostgreSQL transaction, all or nothing, written
 * through the {@link PartitionWriter}. Lock order (broker/DESIGN.md, Lock order): provisioning
 * (names ascending), all push partitions locked ascending by id, the pushes, then the acks in
 * (partition_id, consumer_group) order. A duplicate push inside the
 * dedup window or an ack that cannot be applied rolls everything back. KV and timer riders belong
 * to capabilities this broker does not have yet and are refused, never ignored.
 */
public final class TransactionService {
    public sealed interface Op permits PushOp, AckOp {
        int index();
    }

    public record PushOp(int index, PushService.Item item) implements Op {
    }

    public record AckOp(int index, AckService.Item item, String consumerGroup) implements Op {
    }

    public record OpResult(int index, String type, String transactionId, UUID messageId, String queueName,
                           boolean duplicate, boolean dlq) {
    }

    public record Outcome(String transactionId, boolean success, String error, String reason, List<OpResult> results) {
    }

    private final Database database;
    private final PartitionWriter writer;
    private final AckService ack;
    private final CommitListener listener;

    /** Writes through {@code push}'s partition writer, in this route's own transaction. */
    public TransactionService(Database database, PushService push, AckService ack, CommitListener listener) {
        this.database = database;
        this.writer = push.writer();
        this.ack = ack;
        this.listener = listener;
    }

    public Outcome execute(UUID tenant, List<Op> ops, List<String> requiredLeases) throws SQLException {
        String txId = UuidV7.next().toString();
        List<PushOp> pushOps = new ArrayList<>();
        List<AckOp> ackOps = new ArrayList<>();
        for (Op op : ops) {
            if (op instanceof PushOp p) {
                pushOps.add(p);
            } else if (op instanceof AckOp a) {
                ackOps.add(a);
            }
        }
        boolean anyLeaseInfo = !requiredLeases.isEmpty()
                || ackOps.stream().anyMatch(a -> !a.item().leaseId().isEmpty());

        List<PushService.Item> items = pushOps.stream().map(PushOp::item).toList();
        PushPlan plan = PushPlan.of(items);
        List<PushPlan.Group> groups = plan.groups();
        OpResult[] results = new OpResult[ops.size()];
        PartitionWriter.Batch batch = new PartitionWriter.Batch();

        try (Connection c = database.connection()) {
            c.setAutoCommit(false);
            try {
                if (!groups.isEmpty()) {
                    writer.provision(c, tenant, groups);
                    batch.add(groups);
                    writer.writePartitions(c, batch, true);
                }
                String rejection = applyAcks(c, tenant, ackOps, anyLeaseInfo, results);
                if (rejection != null) {
                    c.rollback();
                    return new Outcome(txId, false, rejection, "ack_rejected", List.of());
                }
                c.commit();
                batch.committed();
            } catch (PartitionWriter.DuplicateInTransactionException e) {
                c.rollback();
                return new Outcome(txId, false, e.getMessage(), "duplicate", List.of());
            } catch (SQLException | RuntimeException e) {
                Database.rollbackAfter(c, e);
                throw e;
            } finally {
                Database.restoreAutoCommit(c);
            }
        }
        for (PushPlan.Group g : groups) {
            listener.committed(tenant, g.queue, g.partition);
        }
        for (int k = 0; k < pushOps.size(); k++) {
            PushOp op = pushOps.get(k);
            PushPlan.Slot slot = plan.answering(k);
            results[op.index()] = new OpResult(op.index(), "push", slot.txn, slot.resultId, op.item().queue(),
                    plan.isRepeat(k), false);
        }
        return new Outcome(txId, true, null, null, List.of(results));
    }

    /** Applies the acks in (partition_id, group) order; returns the rejection text, or null when all applied. */
    private String applyAcks(Connection c, UUID tenant, List<AckOp> ackOps, boolean anyLeaseInfo, OpResult[] results)
            throws SQLException {
        Map<String, List<AckOp>> byKey = new TreeMap<>(Comparator.naturalOrder());
        for (AckOp a : ackOps) {
            byKey.computeIfAbsent(a.item().partitionId() + "\u0000" + a.consumerGroup(), k -> new ArrayList<>()).add(a);
        }
        for (List<AckOp> groupOps : byKey.values()) {
            String group = groupOps.get(0).consumerGroup();
            String lease = groupOps.stream().map(a -> a.item().leaseId()).filter(l -> !l.isEmpty()).findFirst().orElse("");
            List<AckService.Item> items = new ArrayList<>();
            List<Integer> idx = new ArrayList<>();
            for (AckOp a : groupOps) {
                AckService.Item it = a.item();
                idx.add(items.size());
                items.add(new AckService.Item(it.transactionId(), it.partitionId(), it.status(), lease, it.error()));
            }
            List<AckService.Result> res = ack.ackGroup(c, tenant, group, items, idx, lease.isEmpty() && anyLeaseInfo);
            for (int k = 0; k < res.size(); k++) {
                AckService.Result r = res.get(k);
                if (!r.success()) {
                    // The reference says so in these words (clients match "rolled back"), e.g.
                    // "invalid or expired lease; transaction rolled back".
                    return r.outcome() == AckOutcome.UNRESOLVABLE
                            ? "QTXN ack references unknown transactionId; transaction rolled back"
                            : r.error() + "; transaction rolled back";
                }
                AckOp op = groupOps.get(k);
                results[op.index()] = new OpResult(op.index(), "ack", r.transactionId(), null, null, false, r.dlq());
            }
        }
        return null;
    }
}
