package io.queen.broker.engine.kv;

import io.queen.broker.config.KvSettings;
import io.queen.broker.lifecycle.Ticker;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rate rung of the KV refusal ladder (broker/DESIGN.md, KV sweeper and quotas): token buckets per
 * tenant, one for calls that read and one for calls that write (a call that does both spends one of
 * each), narrowed by the tenant's quota row when it sets a rate, and one bucket for the whole broker.
 * A call is one token whatever its size: the budgets of a call already bound its size. Local to this
 * broker, as the reference's are. Buckets refill on the {@link Ticker} handed in, so a test moves a
 * clock rather than waiting for tokens.
 */
public final class KvRates {
    private final KvSettings.Guard guard;
    private final Map<UUID, Bucket> reads = new ConcurrentHashMap<>();
    private final Map<UUID, Bucket> writes = new ConcurrentHashMap<>();
    private final Ticker ticker;
    private final Bucket cell;

    public KvRates(KvSettings.Guard guard, Ticker ticker) {
        this.guard = guard;
        this.ticker = ticker;
        this.cell = guard.cellRate() == 0 ? null : new Bucket(guard.cellRate(), guard.cellRate(), ticker.nanoTime());
    }

    /**
     * Spends the call's tokens; 0 admits it, otherwise the whole seconds to wait (Retry-After), and
     * nothing is spent. {@code limits} are the tenant's own (null: none).
     */
    public long take(UUID tenant, boolean read, boolean write, KvQuota.Limits limits) {
        long nowNanos = ticker.nanoTime();
        if (reads.size() + writes.size() > 2L * guard.maxTenants()) {
            // A bounded map: dropping the buckets only refills them.
            reads.clear();
            writes.clear();
        }
        Bucket r = read ? reads.computeIfAbsent(tenant, k -> bucket(guard.readRate(), guard.readBurst(),
                limits == null ? null : limits.maxReadsPerSec(), nowNanos)) : null;
        Bucket w = write ? writes.computeIfAbsent(tenant, k -> bucket(guard.writeRate(), guard.writeBurst(),
                limits == null ? null : limits.maxWritesPerSec(), nowNanos)) : null;
        long wait = 0;
        for (Bucket b : new Bucket[] {r, w, cell}) {
            if (b != null) {
                wait = Math.max(wait, b.waitNanos(nowNanos));
            }
        }
        if (wait > 0) {
            return Math.max(1, (wait + 999_999_999L) / 1_000_000_000L);
        }
        for (Bucket b : new Bucket[] {r, w, cell}) {
            if (b != null) {
                b.spend();
            }
        }
        return 0;
    }

    private static Bucket bucket(int rate, int burst, Integer own, long nowNanos) {
        int r = own == null || own <= 0 ? rate : Math.min(rate, own);
        return new Bucket(r, own == null || own <= 0 ? burst : Math.min(burst, Math.max(r, 1) * 2), nowNanos);
    }

    /** Tokens refill at {@code rate} a second up to {@code burst}. */
    private static final class Bucket {
        private final double rate;
        private final double burst;
        private double tokens;
        private long at;

        Bucket(double rate, double burst, long nowNanos) {
            this.rate = rate;
            this.burst = burst;
            this.tokens = burst;
            this.at = nowNanos;
        }

        /** 0 when a token is there now, else the nanoseconds until one is. */
        synchronized long waitNanos(long now) {
            tokens = Math.min(burst, tokens + (now - at) / 1e9 * rate);
            at = now;
            return tokens >= 1 ? 0 : (long) Math.ceil((1 - tokens) / rate * 1e9);
        }

        synchronized void spend() {
            tokens -= 1;
        }
    }
}
