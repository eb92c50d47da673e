package io.queen.broker.config;

import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Logger;

/**
 * Background-job settings, with the reference broker's names and defaults. As in the reference, a
 * value below a minimum is clamped (with a WARN naming the setting), and a value that is not a
 * number at all stops the boot.
 *
 * <p>{@code QUEEN_TEST_JOBS_FLOOR_MS} is ours and for tests only: when set, it replaces the 1000 ms
 * floors of {@code STATS_INTERVAL_MS} and {@code METRICS_FLUSH_MS} and of the lease poll interval,
 * so a test can watch several cycles in a few seconds. Production never sets it.
 *
 * @param serverId node identity for lease holders and metrics rows: {@code QUEEN_SERVER_ID}, else
 *                 {@code HOSTNAME}, else a random {@code queen-xxxxxxxx}
 */
public record JobSettings(
        long retentionIntervalMs,
        int retentionBatchSize,
        int partitionCleanupDays,
        boolean partitionCleanupEnabled,
        long statsIntervalMs,
        long retainedBytesIntervalMs,
        long metricsFlushMs,
        int metricsRetentionDays,
        long floorMs,
        String serverId) {

    private static final Logger LOG = Logger.getLogger(JobSettings.class.getName());
    static final long DEFAULT_FLOOR_MS = 1_000;
    static final long MAX_INTERVAL_MS = 30L * 24 * 3600 * 1000;

    public static JobSettings from(Env env) {
        long floor = env.longValue("QUEEN_TEST_JOBS_FLOOR_MS", DEFAULT_FLOOR_MS, 10, DEFAULT_FLOOR_MS);
        if (floor != DEFAULT_FLOOR_MS) {
            LOG.warning("QUEEN_TEST_JOBS_FLOOR_MS=" + floor + ": background job floors lowered (tests only)");
        }
        return new JobSettings(
                atLeast(env, "RETENTION_INTERVAL", 5_000, 1),
                (int) atLeast(env, "RETENTION_BATCH_SIZE", 1_000, 1),
                (int) atLeast(env, "PARTITION_CLEANUP_DAYS", 30, 1),
                env.bool("QUEEN_PARTITION_CLEANUP_ENABLED", true),
                atLeast(env, "STATS_INTERVAL_MS", 10_000, floor),
                atLeast(env, "RETAINED_BYTES_INTERVAL_MS", 600_000, 1),
                atLeast(env, "METRICS_FLUSH_MS", 60_000, floor),
                (int) atLeast(env, "METRICS_RETENTION_DAYS", 90, 1),
                floor,
                serverId(env));
    }

    /**
     * Integers only; a number below {@code min} is clamped to it, with a WARN naming the setting.
     * Above the maximum (a day count or size past int range, an interval past 30 days) is fatal.
     */
    private static long atLeast(Env env, String name, long fallback, long min) {
        long max = name.endsWith("_DAYS") || name.endsWith("_SIZE") ? Integer.MAX_VALUE : MAX_INTERVAL_MS;
        long value = env.longValue(name, fallback, Long.MIN_VALUE, max);
        if (value < min) {
            LOG.warning(name + "=" + value + " is below its minimum; using " + min);
            return min;
        }
        return value;
    }

    private static String serverId(Env env) {
        String id = env.string("QUEEN_SERVER_ID", env.string("HOSTNAME", null));
        if (id == null || id.isBlank()) {
            return String.format(Locale.ROOT, "queen-%08x", ThreadLocalRandom.current().nextInt());
        }
        return id.trim();
    }
}
