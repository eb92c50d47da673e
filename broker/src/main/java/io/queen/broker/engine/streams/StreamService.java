package io.queen.broker.engine.streams;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.queen.broker.engine.CommitListener;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.engine.SurfaceMetrics.CycleResult;
import io.queen.broker.engine.TransactionalPush;
import io.queen.broker.store.Database;
import io.queen.broker.store.StreamStore;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * The streams routes' use cases (broker/DESIGN.md, Streams): registering a query, reading its
 * state, and the cycle, which commits a batch's sink pushes, its source ack and its state
 * operations in one transaction or not at all. The cycle is three steps on one connection: the
 * shard lock and ownership gates ({@code log_streams_cycle_open_v1}), the sink pushes through the
 * partition writer ({@link TransactionalPush}, as {@code /push} writes them), then the ack and the
 * state ({@code log_streams_cycle_v1}). After the commit the sink partitions' parked pops wake, and
 * the source partition's when the ack released a lease with messages behind it.
 */
public final class StreamService {
    /**
     * A state key's ceiling in UTF-8 bytes: keys are a btree's entries, which hold about 2.7 KB; the
     * reference has no check of its own and fails there. {@code log_streams_cycle_v1} holds it too.
     */
    public static final int MAX_STATE_KEY_BYTES = 2048;
    /** A state value's ceiling, its compact JSON in bytes (the reference stops only at the body limit). */
    public static final int MAX_STATE_VALUE_BYTES = 16 * 1024 * 1024;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    // ---------------------------------------------------------------- registration

    /** {@code sinkQueue} null when the query has none. */
    public record Registration(String name, String sourceQueue, String sinkQueue, String configHash, boolean reset) {
    }

    public sealed interface RegisterOutcome permits Registered, HashMismatch, Denied {
    }

    /** {@code fresh}: created by this call; {@code reset}: its state was deleted for a new hash. */
    public record Registered(UUID queryId, String name, String configHash, boolean fresh, boolean reset)
            implements RegisterOutcome {
    }

    /** The query exists with another hash and no reset was asked: nothing was written. */
    public record HashMismatch(UUID queryId, String name, String error) implements RegisterOutcome {
    }

    /** A new name of a tenant without a streams grant, or whose grant is full. */
    public record Denied(String error) implements RegisterOutcome {
    }

    // ---------------------------------------------------------------- state reads

    /** {@code keys} empty for every key; {@code keyPrefix} and {@code ripeAtOrBefore} (epoch ms) null for none. */
    public record StateQuery(UUID queryId, UUID partitionId, List<String> keys, String keyPrefix,
                             BigDecimal ripeAtOrBefore) {
    }

    public sealed interface StateOutcome permits StateRows, NotFound {
    }

    /** The rows as a JSON array of {key, value, updated_at}, in key byte order (009). */
    public record StateRows(String rowsJson) implements StateOutcome {
    }

    /** The partition, or the query, is not the tenant's (or does not exist). */
    public record NotFound(Refusal what) implements StateOutcome {
    }

    // ---------------------------------------------------------------- the cycle

    public enum StateOpType { UPSERT, DELETE }

    /** One state operation; {@code valueJson} is the upsert's value as compact JSON, null for a delete. */
    public record StateOp(StateOpType type, String key, String valueJson) {
    }

    /** The source ack: the lease it is under, completed or not, and how many messages it covers. */
    public record Ack(String leaseId, boolean ok, long count) {
    }

    /** {@code ack} null for an idle flush, which touches no cursor. */
    public record Cycle(UUID queryId, UUID partitionId, String consumerGroup, List<StateOp> stateOps,
                        List<PushService.Item> pushes, Ack ack, boolean releaseLease) {
    }

    public sealed interface CycleOutcome permits Committed, Refused {
    }

    /** What a committed cycle did; {@code ack} null when it carried none. */
    public record Committed(String queueName, int stateOpsApplied, List<TransactionalPush.GroupResult> pushes,
                            AckResult ack) implements CycleOutcome {
    }

    /** {@code count}: the messages the ack covered (0 for a nack). */
    public record AckResult(long count, boolean leaseReleased) {
    }

    /**
     * Why a cycle wrote nothing; {@code queueName} the source queue when the gates had found it, and
     * {@code detail} the store's words on a malformed operation.
     */
    public record Refused(Refusal reason, String queueName, String detail) implements CycleOutcome {
    }

    public enum Refusal {
        PARTITION_NOT_FOUND, QUERY_NOT_FOUND, LEASE_INVALID, NO_LEASED_BATCH, BAD_STATE_OP, STATE_KEY_TOO_LARGE
    }

    private final Database database;
    private final TransactionalPush sink;
    private final CommitListener listener;
    private final SurfaceMetrics metrics;

    /**
     * Sink pushes go through {@code push}'s partition writer; commits and lease releases are told to
     * {@code listener}; each cycle's result, state operations and sink items are counted in {@code metrics}.
     */
    public StreamService(Database database, PushService push, CommitListener listener, SurfaceMetrics metrics) {
        this.database = database;
        this.metrics = metrics;
        this.sink = new TransactionalPush(push, listener);
        this.listener = listener;
    }

    public RegisterOutcome register(UUID tenant, Registration r) throws SQLException {
        StreamStore.Registration row;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            row = StreamStore.register(c, tenant, r.name(), r.sourceQueue(), r.sinkQueue(), r.configHash(), r.reset());
        }
        return switch (row.outcome()) {
            case "fresh" -> new Registered(row.queryId(), r.name(), r.configHash(), true, false);
            case "existing" -> new Registered(row.queryId(), r.name(), r.configHash(), false, false);
            case "reset" -> new Registered(row.queryId(), r.name(), r.configHash(), false, true);
            case "mismatch" -> new HashMismatch(row.queryId(), r.name(), row.detail());
            case "denied" -> new Denied(row.detail());
            default -> throw new IllegalStateException("streams_register_query_v1 answered " + row.outcome());
        };
    }

    public StateOutcome readState(UUID tenant, StateQuery q) throws SQLException {
        StreamStore.StateRows rows;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            rows = StreamStore.readState(c, tenant, q.queryId(), q.partitionId(), q.keys(), q.keyPrefix(),
                    q.ripeAtOrBefore());
        }
        return switch (rows.status()) {
            case "ok" -> new StateRows(rows.rowsJson());
            case "partition_not_found" -> new NotFound(Refusal.PARTITION_NOT_FOUND);
            case "query_not_found" -> new NotFound(Refusal.QUERY_NOT_FOUND);
            default -> throw new IllegalStateException("streams_state_get_v1 answered " + rows.status());
        };
    }

    public CycleOutcome cycle(UUID tenant, Cycle r) throws SQLException {
        CycleOutcome outcome;
        try {
            outcome = runCycle(tenant, r);
        } catch (SQLException e) {
            metrics.cycle(CycleResult.ERROR);
            throw e;
        }
        switch (outcome) {
            case Committed c -> {
                int upserts = (int) r.stateOps().stream().filter(op -> op.type() == StateOpType.UPSERT).count();
                int queued = c.pushes().stream().mapToInt(TransactionalPush.GroupResult::queued).sum();
                int duplicates = c.pushes().stream().mapToInt(TransactionalPush.GroupResult::duplicates).sum();
                // The procedure applies every operation of a committed cycle (or raises and commits none).
                metrics.cycleCommitted(upserts, r.stateOps().size() - upserts, queued, duplicates);
            }
            case Refused f -> metrics.cycle(switch (f.reason()) {
                case PARTITION_NOT_FOUND -> CycleResult.PARTITION_NOT_FOUND;
                case QUERY_NOT_FOUND -> CycleResult.QUERY_NOT_FOUND;
                case LEASE_INVALID -> CycleResult.LEASE_INVALID;
                case NO_LEASED_BATCH -> CycleResult.NO_LEASED_BATCH;
                case BAD_STATE_OP -> CycleResult.BAD_STATE_OP;
                case STATE_KEY_TOO_LARGE -> CycleResult.STATE_KEY_TOO_LARGE;
            });
        }
        return outcome;
    }

    private CycleOutcome runCycle(UUID tenant, Cycle r) throws SQLException {
        String opsJson = opsJson(r.stateOps());
        Ack ack = r.ack();
        StreamStore.CycleSource source;
        TransactionalPush.Written written;
        StreamStore.CycleClose close;
        try (Connection c = database.connection()) {
            c.setAutoCommit(false);
            try {
                source = StreamStore.openCycle(c, tenant, r.queryId(), r.partitionId());
                if (!source.partitionFound() || !source.queryFound()) {
                    c.rollback();
                    return new Refused(source.partitionFound() ? Refusal.QUERY_NOT_FOUND : Refusal.PARTITION_NOT_FOUND,
                            null, null);
                }
                written = sink.write(c, tenant, r.pushes());
                try {
                    close = StreamStore.closeCycle(c, tenant, r.queryId(), r.partitionId(), r.consumerGroup(),
                            ack != null, ack == null ? null : ack.leaseId(), ack == null || ack.ok(),
                            ack == null ? 0 : ack.count(), r.releaseLease(), opsJson, MAX_STATE_KEY_BYTES);
                } catch (SQLException e) {
                    Refusal refusal = refusal(StreamStore.raised(e));
                    if (refusal == null) {
                        throw e;
                    }
                    // The procedure raised: the transaction is doomed, the sink pushes go with it.
                    c.rollback();
                    StreamStore.Raised raised = StreamStore.raised(e);
                    return new Refused(refusal, source.queueName(), raised.detail());
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                Database.rollbackAfter(c, e);
                throw e;
            } finally {
                Database.restoreAutoCommit(c);
            }
        }
        written.committed();
        if (close.more()) {
            // The ack released the source lease with messages behind the cursor: they are claimable again.
            listener.committed(tenant, source.queueName(), source.partitionName());
        }
        return new Committed(source.queueName(), close.stateOpsApplied(), written.results(),
                ack == null ? null : new AckResult(close.ackCount(), close.leaseReleased()));
    }

    private static Refusal refusal(StreamStore.Raised raised) {
        if (raised == null) {
            return null;
        }
        return switch (raised.identifier()) {
            case "streams_lease_invalid" -> Refusal.LEASE_INVALID;
            case "streams_no_leased_batch" -> Refusal.NO_LEASED_BATCH;
            case "streams_bad_state_op" -> Refusal.BAD_STATE_OP;
            case "streams_state_key_too_large" -> Refusal.STATE_KEY_TOO_LARGE;
            default -> null;
        };
    }

    /** The operations as the procedure reads them: [{type, key, value?}], in order. */
    private static String opsJson(List<StateOp> ops) {
        ArrayNode out = MAPPER.createArrayNode();
        for (StateOp op : ops) {
            ObjectNode o = out.addObject();
            o.put("type", op.type() == StateOpType.UPSERT ? "upsert" : "delete");
            o.put("key", op.key());
            if (op.type() == StateOpType.UPSERT && op.valueJson() != null) {
                o.putRawValue("value", new RawValue(op.valueJson()));
            }
        }
        try {
            return MAPPER.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("state operations not serialisable", e);
        }
    }
}
