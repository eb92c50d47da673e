package io.queen.broker.engine;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.engine.kv.KvResult;
import io.queen.broker.engine.kv.KvService;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.engine.timers.TimerService;
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
 * {@code POST /transaction}: pushes, acks and the KV and timer riders in one PostgreSQL transaction,
 * all or nothing, the pushes written through the {@link PartitionWriter}. Lock order (broker/DESIGN.md,
 * Lock order), which is the order of the statements below: the KV rider (its rows in (namespace, key)
 * order), the timer rider ((queue, timerKey) order), provisioning (names ascending), all push
 * partitions locked ascending by id, the pushes, then the acks in (partition_id, consumer_group)
 * order. No KV or timer row is taken after a queue, partition or consumer row. A lost required KV
 * precondition, a duplicate push inside the dedup window or an ack that cannot be applied rolls
 * everything back. The riders are checked (shape, budgets, switches) before a connection is taken.
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

    /**
     * How the call ended. On a commit, {@code results} answers the operations (flat, one per push item
     * and ack) and {@code kv} and {@code timers} the riders, in their own order; the wire numbers them
     * after the operations. On a rollback {@code error} and {@code reason} say why, and {@code lost} is
     * the KV verdict when a required precondition lost, its index already in that flat space.
     */
    public record Outcome(String transactionId, boolean success, String error, String reason, List<OpResult> results,
                          List<KvResult> kv, List<JsonNode> timers, KvService.PreconditionLost lost) {
        static Outcome rolledBack(String txId, String error, String reason) {
            return new Outcome(txId, false, error, reason, List.of(), List.of(), List.of(), null);
        }
    }

    /** The riders of one call, as the request carried them (empty when absent). */
    public record Riders(List<JsonNode> kv, List<JsonNode> timers) {
        public static final Riders NONE = new Riders(List.of(), List.of());

        public Riders {
            kv = List.copyOf(kv);
            timers = List.copyOf(timers);
        }
    }

    /** The rollback's text on a lost precondition; clients branch on reason, never on this. */
    static final String PRECONDITION_LOST = "QKV a required KV precondition did not hold; transaction rolled back";

    private final Database database;
    private final PartitionWriter writer;
    private final AckService ack;
    private final CommitListener listener;
    private final KvService kv;
    private final TimerService timers;

    /** Writes through {@code push}'s partition writer, in this route's own transaction. */
    public TransactionService(Database database, PushService push, AckService ack, CommitListener listener,
                              KvService kv, TimerService timers) {
        this.database = database;
        this.writer = push.writer();
        this.ack = ack;
        this.listener = listener;
        this.kv = kv;
        this.timers = timers;
    }

    public Outcome execute(UUID tenant, List<Op> ops, List<String> requiredLeases) throws SQLException {
        return execute(tenant, ops, requiredLeases, Riders.NONE);
    }

    /**
     * Runs the call. A rider refused before any work is its surface's exception ({@code KvException},
     * {@code TimerException}), for the route to answer; nothing is written then.
     */
    public Outcome execute(UUID tenant, List<Op> ops, List<String> requiredLeases, Riders riders)
            throws SQLException {
        String txId = UuidV7.next().toString();
        KvService.Rider kvRider = riders.kv().isEmpty() ? null : kv.prepareRider(tenant, riders.kv());
        TimerService.Rider timerRider = riders.timers().isEmpty() ? null : timers.prepareRider(tenant, riders.timers());
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
        List<KvResult> kvResults = List.of();
        List<JsonNode> timerResults = List.of();

        try (Connection c = database.connection()) {
            c.setAutoCommit(false);
            try {
                // The outermost lock space first: a lost precondition, the common failure, then costs
                // one statement and no partition lock.
                if (kvRider != null) {
                    KvService.Outcome k = kv.applyRider(c, tenant, kvRider);
                    if (k instanceof KvService.PreconditionLost lost) {
                        c.rollback();
                        return new Outcome(txId, false, PRECONDITION_LOST, "kv_precondition", List.of(), List.of(),
                                List.of(), new KvService.PreconditionLost(
                                        lost.failedIndex() == null ? null : ops.size() + lost.failedIndex(),
                                        lost.kvReason(), lost.version(), lost.value()));
                    }
                    kvResults = ((KvService.Answered) k).results();
                }
                if (timerRider != null) {
                    timerResults = timers.applyRider(c, tenant, timerRider);
                }
                if (!groups.isEmpty()) {
                    writer.provision(c, tenant, groups);
                    batch.add(groups);
                    writer.writePartitions(c, batch, true);
                }
                String rejection = applyAcks(c, tenant, ackOps, anyLeaseInfo, results);
                if (rejection != null) {
                    c.rollback();
                    return Outcome.rolledBack(txId, rejection, "ack_rejected");
                }
                c.commit();
                batch.committed();
            } catch (PartitionWriter.DuplicateInTransactionException e) {
                c.rollback();
                return Outcome.rolledBack(txId, e.getMessage(), "duplicate");
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
        if (timerRider != null) {
            timers.committed(timerRider);
        }
        for (int k = 0; k < pushOps.size(); k++) {
            PushOp op = pushOps.get(k);
            PushPlan.Slot slot = plan.answering(k);
            results[op.index()] = new OpResult(op.index(), "push", slot.txn, slot.resultId, op.item().queue(),
                    plan.isRepeat(k), false);
        }
        return new Outcome(txId, true, null, null, List.of(results), kvResults, timerResults, null);
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
