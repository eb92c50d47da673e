package io.queen.broker.engine.timers;

import io.queen.broker.engine.kv.KvQuota;
import io.queen.broker.engine.kv.KvRates;

import java.util.UUID;

/**
 * The rungs of the refusal ladder below the schedule switch for a call that schedules timers
 * (broker/DESIGN.md, KV sweeper and quotas), outermost first: the tenant's grant (403
 * {@code feature_gated}), its timer occupancy (403 {@code timers_quota_exceeded}: what the last quota
 * poll measured plus what this broker scheduled since), and its write rate (429 {@code rate_limited}).
 * The timers share the KV's quota view and write buckets because the reference meters them as one
 * surface: one quota row per tenant, one write budget whether a call puts keys or schedules timers.
 * Cancels and reads never pass through here: nothing may stop a tenant from cancelling.
 */
public final class TimerGate {
    private final KvQuota quota;
    private final KvRates rates;

    public TimerGate(KvQuota quota, KvRates rates) {
        this.quota = quota;
        this.rates = rates;
    }

    /** Admits a call of {@code schedules} schedule operations, or throws the refusal. */
    void admit(UUID tenant, int schedules) {
        KvQuota.Refusal refusal = quota.checkTimers(tenant, schedules);
        if (refusal == KvQuota.Refusal.FEATURE_GATED) {
            throw TimerException.featureGated();
        }
        if (refusal == KvQuota.Refusal.QUOTA_EXCEEDED) {
            throw TimerException.quotaExceeded();
        }
        long wait = rates.take(tenant, false, true, quota.limits(tenant));
        if (wait > 0) {
            throw TimerException.rateLimited(wait);
        }
    }

    /** After a committed call that scheduled {@code schedules} timers. */
    void scheduled(UUID tenant, int schedules) {
        quota.scheduled(tenant, schedules);
    }

    /** The horizon in force for the tenant, in seconds: the cell's, narrowed by the tenant's quota row. */
    long horizonSeconds(UUID tenant, long cellSeconds) {
        return quota.horizonSeconds(tenant, cellSeconds);
    }
}
