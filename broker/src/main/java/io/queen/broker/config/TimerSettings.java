package io.queen.broker.config;

/**
 * Timers and their sweeper (broker/DESIGN.md, Timers), under the reference broker's variable names and
 * with its defaults.
 *
 * @param maxPayloadBytes QUEEN_TIMERS_MAX_PAYLOAD_BYTES: a timer's payload as decoded from base64 (and
 *                        once decompressed), in bytes (413 beyond)
 * @param maxHorizonS     QUEEN_TIMERS_MAX_HORIZON_S: the furthest a delay may reach (403 beyond)
 * @param maxOpsPerCall   QUEEN_TIMERS_MAX_OPS_PER_CALL: operations in one POST /timers
 * @param sweeper         QUEEN_SWEEPER: whether this broker fires due timers (every broker does by default)
 * @param minSleepMs      QUEEN_SWEEPER_MIN_SLEEP_MS: the sweeper's shortest pause, while there is work
 * @param maxSleepMs      QUEEN_SWEEPER_MAX_SLEEP_MS: its longest pause while timers are pending; also the
 *                        worst delay for a timer another broker scheduled
 * @param idleMaxSleepMs  QUEEN_SWEEPER_IDLE_MAX_SLEEP_MS: its longest pause with no timer at all (a local
 *                        schedule wakes it at once)
 * @param leaseMs         QUEEN_SWEEPER_LEASE_MS: how long a claim holds a timer; also the too_late window and
 *                        the longest a timer waits when the broker holding it dies
 * @param claimBatch      QUEEN_SWEEPER_CLAIM_BATCH: timers claimed per claim
 * @param maxAttempts     QUEEN_SWEEPER_MAX_ATTEMPTS: permanent failures before the DLQ
 * @param backoffMinMs    QUEEN_SWEEPER_BACKOFF_MIN_MS: the first backoff after a failed fire (doubling)
 * @param backoffMaxMs    QUEEN_SWEEPER_BACKOFF_MAX_MS: the longest backoff
 */
public record TimerSettings(int maxPayloadBytes, long maxHorizonS, int maxOpsPerCall, boolean sweeper,
                            long minSleepMs, long maxSleepMs, long idleMaxSleepMs, int leaseMs, int claimBatch,
                            int maxAttempts, int backoffMinMs, int backoffMaxMs) {

    public static TimerSettings defaults() {
        return from(new Env(java.util.Map.of()));
    }

    static TimerSettings from(Env env) {
        long min = env.longValue("QUEEN_SWEEPER_MIN_SLEEP_MS", 5, 1, 60_000);
        return new TimerSettings(
                env.integer("QUEEN_TIMERS_MAX_PAYLOAD_BYTES", 1024 * 1024, 1, 64 * 1024 * 1024),
                env.longValue("QUEEN_TIMERS_MAX_HORIZON_S", 7_776_000L, 1, 100L * 365 * 86_400),
                env.integer("QUEEN_TIMERS_MAX_OPS_PER_CALL", 256, 1, 10_000),
                env.bool("QUEEN_SWEEPER", true),
                min,
                Math.max(min, env.longValue("QUEEN_SWEEPER_MAX_SLEEP_MS", 1_000, 1, 600_000)),
                Math.max(min, env.longValue("QUEEN_SWEEPER_IDLE_MAX_SLEEP_MS", 30_000, 1, 3_600_000)),
                env.integer("QUEEN_SWEEPER_LEASE_MS", 30_000, 100, 3_600_000),
                env.integer("QUEEN_SWEEPER_CLAIM_BATCH", 200, 1, 10_000),
                env.integer("QUEEN_SWEEPER_MAX_ATTEMPTS", 5, 1, 1_000),
                env.integer("QUEEN_SWEEPER_BACKOFF_MIN_MS", 1_000, 0, 3_600_000),
                env.integer("QUEEN_SWEEPER_BACKOFF_MAX_MS", 60_000, 0, 86_400_000));
    }
}
