package io.queen.broker.http;

import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.engine.SurfaceMetrics.CycleResult;
import io.queen.broker.engine.SurfaceMetrics.FireFailure;
import io.queen.broker.engine.SurfaceMetrics.FireResult;
import io.queen.broker.engine.SurfaceMetrics.KvOpKind;
import io.queen.broker.engine.SurfaceMetrics.KvOutcome;
import io.queen.broker.engine.SurfaceMetrics.KvRefusal;
import io.queen.broker.engine.SurfaceMetrics.SweepPhase;
import io.queen.broker.engine.SurfaceMetrics.TimerRefusal;
import io.queen.broker.engine.SurfaceMetrics.TimerResult;

/**
 * The KV, timer, sweeper and streams families of /metrics/prometheus, from this process's
 * {@link SurfaceMetrics}. Every family is written on a fresh broker too, every label value at 0, so
 * an alert rule holds before the first call. Where the reference broker exports the same thing the
 * name and labels are its own ({@code queen_kv_ops_total{op,result}}, {@code queen_timers_fired_total},
 * {@code queen_timers_dlq_total}, {@code queen_timers_fire_failures_total{class}},
 * {@code queen_timers_schedule_rejected_total{reason}}, {@code queen_timers_due},
 * {@code queen_timers_due_capped}, {@code queen_timers_oldest_late_seconds},
 * {@code queen_kv_expired_not_pruned}, {@code queen_kv_expired_not_pruned_capped},
 * {@code queen_sweeper_rows_total{phase}}, and the streams design's {@code queen_streams_cycle_total}
 * and {@code queen_streams_state_ops_total{op}}). The rest are this broker's: the reference's fire lag
 * is a per-tenant quantile gauge, here a histogram without tenant, bounded and summable across
 * brokers; its read refusals are reads only, here the ladder's refusals of any call.
 */
final class SurfaceFamilies {
    private SurfaceFamilies() {
    }

    static void write(PrometheusText t, SurfaceMetrics m) {
        kv(t, m);
        timers(t, m);
        sweepers(t, m);
        streams(t, m);
    }

    private static void kv(PrometheusText t, SurfaceMetrics m) {
        t.family("queen_kv_ops_total", "counter",
                "KV operations by code path and outcome (rejected: a precondition did not hold)");
        for (KvOpKind op : KvOpKind.values()) {
            for (KvOutcome outcome : KvOutcome.values()) {
                t.sample(m.kvOps(op, outcome), "op", op.label, "result", outcome.label);
            }
        }
        t.family("queen_kv_refused_total", "counter", "KV calls refused by the admission ladder, by rung");
        for (KvRefusal r : KvRefusal.values()) {
            t.sample(m.kvRefusals(r), "reason", r.label);
        }
    }

    private static void timers(PrometheusText t, SurfaceMetrics m) {
        t.family("queen_timers_ops_total", "counter",
                "Timer operations by result (refused: the call was refused before the store)");
        for (TimerResult r : TimerResult.values()) {
            t.sample(m.timerOps(r), "result", r.label);
        }
        t.family("queen_timers_schedule_rejected_total", "counter", "Timer calls refused, by reason");
        for (TimerRefusal r : TimerRefusal.values()) {
            t.sample(m.timerRefusals(r), "reason", r.label);
        }
        t.family("queen_timers_fired_total", "counter",
                "Timers the fire held, by result (duplicate: already in the log; stale: no longer this claim's)");
        for (FireResult r : FireResult.values()) {
            t.sample(m.fired(r), "result", r.label);
        }
        t.family("queen_timers_fire_failures_total", "counter", "Timers whose fire failed, by class");
        for (FireFailure f : FireFailure.values()) {
            t.sample(m.fireFailures(f), "class", f.label);
        }
        t.family("queen_timers_dlq_total", "counter", "Timers dead-lettered after exhausting their attempts")
                .sample(m.timersDeadLettered());
        t.histogram("queen_timers_fire_lateness_seconds",
                "Lateness of fired timers: the database's claim time minus the due time",
                SurfaceMetrics.latenessBounds(), m.latenessBuckets(), m.latenessSumSeconds());
        SurfaceMetrics.TimerLag lag = m.timerLag();
        if (lag != null) {
            // Cell-wide, from the metrics loop's last SQL sample: the same on every broker, aggregate with max.
            t.family("queen_timers_due", "gauge", "Timers due now and held by no broker (a floor when capped)")
                    .sample(lag.due());
            t.family("queen_timers_due_capped", "gauge", "1 when the due count hit its cap and is a floor")
                    .sample(lag.capped() ? 1 : 0);
            t.family("queen_timers_oldest_late_seconds", "gauge",
                    "How long the oldest due, unfired timer has waited past its due time")
                    .sample(lag.oldestLateMs() / 1000.0);
        }
    }

    private static void sweepers(PrometheusText t, SurfaceMetrics m) {
        t.family("queen_sweeper_rows_total", "counter",
                "Rows handled by this broker's sweepers: timers fired, expired KV rows pruned, tenants measured");
        for (SweepPhase p : SweepPhase.values()) {
            t.sample(m.sweptRows(p), "phase", p.label);
        }
        t.family("queen_kv_usage_runs_total", "counter",
                "KV usage rollup steps, by result (skipped: another broker had just measured)")
                .sample(m.usageRuns(false), "result", "measured")
                .sample(m.usageRuns(true), "result", "skipped");
        SurfaceMetrics.KvBacklog backlog = m.kvBacklog();
        if (backlog != null) {
            t.family("queen_kv_expired_not_pruned", "gauge",
                    "Expired KV rows the sweeper left after its last step (capped)").sample(backlog.expired());
            t.family("queen_kv_expired_not_pruned_capped", "gauge",
                    "1 when the unpruned count hit its cap and is a floor").sample(backlog.capped() ? 1 : 0);
        }
    }

    private static void streams(PrometheusText t, SurfaceMetrics m) {
        t.family("queen_streams_cycle_total", "counter", "Streams cycles by result (refusals by their reason)");
        for (CycleResult r : CycleResult.values()) {
            t.sample(m.cycles(r), "result", r.label);
        }
        t.family("queen_streams_state_ops_total", "counter", "State operations applied by committed cycles")
                .sample(m.stateOps(true), "op", "upsert")
                .sample(m.stateOps(false), "op", "delete");
        t.family("queen_streams_sink_push_items_total", "counter",
                "Sink items of committed cycles, by result (duplicate: its transactionId was already there)")
                .sample(m.sinkItems(false), "result", "queued")
                .sample(m.sinkItems(true), "result", "duplicate");
    }
}
