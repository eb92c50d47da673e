package io.queen.broker.engine;

import java.util.concurrent.atomic.LongAdder;

/**
 * In-process counters of the KV store, the timers, the sweepers and the streams cycle on this broker
 * since it started, served by /metrics/prometheus. Every label is one of the enums below, so no
 * caller can mint a label value: never a key, queue or tenant name. Recording is one
 * {@link LongAdder} increment; the two gauges are the last sample a background loop took from SQL,
 * so a scrape never queries for them.
 */
public final class SurfaceMetrics {

    /** A KV operation's code path; putIfAbsent is put with an expectation, so it counts as put. */
    public enum KvOpKind {
        GET("get"), GET_MANY("getMany"), GET_PREFIX("getPrefix"), PUT("put"), DELETE("delete"), INCR("incr");

        public final String label;

        KvOpKind(String label) {
            this.label = label;
        }

        /** The kind of an operation named as the client names it, or null for a name the store has not. */
        public static KvOpKind of(String op) {
            return switch (op == null ? "" : op) {
                case "get" -> GET;
                case "getMany" -> GET_MANY;
                case "getPrefix" -> GET_PREFIX;
                case "put", "putIfAbsent" -> PUT;
                case "delete" -> DELETE;
                case "incr" -> INCR;
                default -> null;
            };
        }
    }

    /**
     * applied; rejected (its precondition did not hold, or a required one rolled the call back: a
     * verdict, the expected answer of a redelivery, never an error); error (the database failed).
     */
    public enum KvOutcome {
        APPLIED("applied"), REJECTED("rejected"), ERROR("error");

        public final String label;

        KvOutcome(String label) {
            this.label = label;
        }
    }

    /** The admission ladder's rung that turned a KV call away before the store. */
    public enum KvRefusal {
        DISABLED("disabled"), FEATURE_GATED("feature_gated"), QUOTA("quota"), RATE_LIMITED("rate_limited");

        public final String label;

        KvRefusal(String label) {
            this.label = label;
        }
    }

    /** What one timer operation came to: the store's status, or refused before it. */
    public enum TimerResult {
        SCHEDULED("scheduled"), RESCHEDULED("rescheduled"), CANCELLED("cancelled"), ABSENT("absent"),
        TOO_LATE("too_late"), REFUSED("refused");

        public final String label;

        TimerResult(String label) {
            this.label = label;
        }

        /** The result of a store status, or null for one this broker does not know. */
        public static TimerResult ofStatus(String status) {
            return switch (status == null ? "" : status) {
                case "scheduled" -> SCHEDULED;
                case "rescheduled" -> RESCHEDULED;
                case "cancelled" -> CANCELLED;
                case "absent" -> ABSENT;
                case "too_late" -> TOO_LATE;
                default -> null;
            };
        }
    }

    /** Why a timer call was refused: its shape, a payload size, the horizon, or the operator's switch. */
    public enum TimerRefusal {
        SHAPE("shape"), PAYLOAD_TOO_LARGE("payload_too_large"), HORIZON("horizon"), DISABLED("disabled"),
        FEATURE_GATED("feature_gated"), QUOTA("quota"), RATE_LIMITED("rate_limited");

        public final String label;

        TimerRefusal(String label) {
            this.label = label;
        }
    }

    /**
     * A held timer's fire: fired (its message written now), duplicate (its txn was already in the log,
     * so it had been delivered), stale (claimed, then cancelled, rescheduled or re-claimed elsewhere
     * before the fire could hold it: not delivered by this fire).
     */
    public enum FireResult {
        FIRED("fired"), DUPLICATE("duplicate"), STALE("stale");

        public final String label;

        FireResult(String label) {
            this.label = label;
        }
    }

    /** A failed fire: transient (no attempt spent) or permanent (an attempt spent). */
    public enum FireFailure {
        TRANSIENT("transient"), PERMANENT("permanent");

        public final String label;

        FireFailure(String label) {
            this.label = label;
        }
    }

    /** The sweepers' phases: the timer fire, the KV expiry prune and the usage rollup. */
    public enum SweepPhase {
        FIRE("fire"), KV_EXPIRE("kv_expire"), USAGE("usage");

        public final String label;

        SweepPhase(String label) {
            this.label = label;
        }
    }

    /** A streams cycle: committed, refused (one per refusal of the route), or a database failure. */
    public enum CycleResult {
        SUCCESS("success"), PARTITION_NOT_FOUND("partition_not_found"), QUERY_NOT_FOUND("query_not_found"),
        LEASE_INVALID("lease_invalid"), NO_LEASED_BATCH("no_leased_batch"), BAD_STATE_OP("bad_state_op"),
        STATE_KEY_TOO_LARGE("state_key_too_large"), ERROR("error");

        public final String label;

        CycleResult(String label) {
            this.label = label;
        }
    }

    /** Upper bounds, in seconds, of the fire-lateness histogram's buckets (+Inf implied). */
    private static final double[] LATENESS_BOUNDS = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800};

    /** The fire-lateness histogram's bucket bounds in seconds, a copy. */
    public static double[] latenessBounds() {
        return LATENESS_BOUNDS.clone();
    }

    /** The last sample of the due timers: how many are visible and due (capped), and the oldest's lateness. */
    public record TimerLag(long due, boolean capped, long oldestLateMs) {
    }

    /** The KV sweeper's last count of expired rows left in the table (capped). */
    public record KvBacklog(long expired, boolean capped) {
    }

    private final LongAdder[][] kvOps = adders(KvOpKind.values().length, KvOutcome.values().length);
    private final LongAdder[] kvRefused = adders(KvRefusal.values().length);
    private final LongAdder[] timerOps = adders(TimerResult.values().length);
    private final LongAdder[] timerRefused = adders(TimerRefusal.values().length);
    private final LongAdder[] fired = adders(FireResult.values().length);
    private final LongAdder[] fireFailures = adders(FireFailure.values().length);
    private final LongAdder timersDlq = new LongAdder();
    private final LongAdder[] lateness = adders(LATENESS_BOUNDS.length + 1);
    private final LongAdder latenessMillis = new LongAdder();
    private final LongAdder[] sweeperRows = adders(SweepPhase.values().length);
    private final LongAdder usageMeasured = new LongAdder();
    private final LongAdder usageSkipped = new LongAdder();
    private final LongAdder[] cycles = adders(CycleResult.values().length);
    private final LongAdder stateUpserts = new LongAdder();
    private final LongAdder stateDeletes = new LongAdder();
    private final LongAdder sinkQueued = new LongAdder();
    private final LongAdder sinkDuplicates = new LongAdder();
    private volatile TimerLag timerLag;
    private volatile KvBacklog kvBacklog;

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    private static LongAdder[][] adders(int rows, int columns) {
        LongAdder[][] a = new LongAdder[rows][];
        for (int i = 0; i < rows; i++) {
            a[i] = adders(columns);
        }
        return a;
    }

    // ---------------------------------------------------------------- recording

    public void kvOp(KvOpKind op, KvOutcome outcome) {
        if (op != null) {
            kvOps[op.ordinal()][outcome.ordinal()].increment();
        }
    }

    public void kvRefused(KvRefusal reason) {
        kvRefused[reason.ordinal()].increment();
    }

    public void timerOp(TimerResult result, int operations) {
        if (result != null && operations > 0) {
            timerOps[result.ordinal()].add(operations);
        }
    }

    /** One refused timer call of {@code operations} operations. */
    public void timersRefused(TimerRefusal reason, int operations) {
        timerRefused[reason.ordinal()].increment();
        timerOp(TimerResult.REFUSED, operations);
    }

    public void fired(FireResult result, int timers) {
        if (timers > 0) {
            fired[result.ordinal()].add(timers);
        }
    }

    public void fireFailed(FireFailure failure, int timers) {
        if (timers > 0) {
            fireFailures[failure.ordinal()].add(timers);
        }
    }

    public void timerDeadLettered() {
        timersDlq.increment();
    }

    /** A delivered timer's lateness: the database's claim time minus its due time, in milliseconds. */
    public void fireLateness(long lateMs) {
        long ms = Math.max(lateMs, 0);
        int bucket = 0;
        while (bucket < LATENESS_BOUNDS.length && ms > LATENESS_BOUNDS[bucket] * 1000) {
            bucket++;
        }
        lateness[bucket].increment();
        latenessMillis.add(ms);
    }

    public void sweptRows(SweepPhase phase, long rows) {
        if (rows > 0) {
            sweeperRows[phase.ordinal()].add(rows);
        }
    }

    /** One usage rollup step: measured, or skipped because another broker measured just before. */
    public void usageRun(boolean skipped) {
        (skipped ? usageSkipped : usageMeasured).increment();
    }

    public void cycle(CycleResult result) {
        cycles[result.ordinal()].increment();
    }

    /** A committed cycle's state operations and sink items. */
    public void cycleCommitted(int upserts, int deletes, int sinkItemsQueued, int sinkItemDuplicates) {
        cycle(CycleResult.SUCCESS);
        stateUpserts.add(upserts);
        stateDeletes.add(deletes);
        sinkQueued.add(sinkItemsQueued);
        sinkDuplicates.add(sinkItemDuplicates);
    }

    /** The last lag sample; null when the last attempt failed (the gauge then goes absent). */
    public void timerLag(TimerLag lag) {
        this.timerLag = lag;
    }

    public void kvBacklog(KvBacklog backlog) {
        this.kvBacklog = backlog;
    }

    // ---------------------------------------------------------------- reads

    public long kvOps(KvOpKind op, KvOutcome outcome) {
        return kvOps[op.ordinal()][outcome.ordinal()].sum();
    }

    public long kvRefusals(KvRefusal reason) {
        return kvRefused[reason.ordinal()].sum();
    }

    public long timerOps(TimerResult result) {
        return timerOps[result.ordinal()].sum();
    }

    public long timerRefusals(TimerRefusal reason) {
        return timerRefused[reason.ordinal()].sum();
    }

    public long fired(FireResult result) {
        return fired[result.ordinal()].sum();
    }

    public long fireFailures(FireFailure failure) {
        return fireFailures[failure.ordinal()].sum();
    }

    public long timersDeadLettered() {
        return timersDlq.sum();
    }

    /** Cumulative counts per bound of {@link #latenessBounds()}, then the +Inf bucket (the total count). */
    public long[] latenessBuckets() {
        long[] out = new long[lateness.length];
        long running = 0;
        for (int i = 0; i < lateness.length; i++) {
            running += lateness[i].sum();
            out[i] = running;
        }
        return out;
    }

    public double latenessSumSeconds() {
        return latenessMillis.sum() / 1000.0;
    }

    public long sweptRows(SweepPhase phase) {
        return sweeperRows[phase.ordinal()].sum();
    }

    public long usageRuns(boolean skipped) {
        return (skipped ? usageSkipped : usageMeasured).sum();
    }

    public long cycles(CycleResult result) {
        return cycles[result.ordinal()].sum();
    }

    public long stateOps(boolean upsert) {
        return (upsert ? stateUpserts : stateDeletes).sum();
    }

    public long sinkItems(boolean duplicate) {
        return (duplicate ? sinkDuplicates : sinkQueued).sum();
    }

    public TimerLag timerLag() {
        return timerLag;
    }

    public KvBacklog kvBacklog() {
        return kvBacklog;
    }
}
