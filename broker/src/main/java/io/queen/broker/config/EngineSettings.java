package io.queen.broker.config;

/**
 * Message-path settings: the encryption-at-rest key (QUEEN_ENCRYPTION_KEY; kept out of toString),
 * the segment compression level, the pop defaults and pop autopilot (QUEEN_POP_AUTOPILOT: on by
 * default; shadow computes and logs what it would choose and applies nothing; off makes the broker
 * ignore the parameter) with the batch it gives a pop that delegates it
 * (QUEEN_POP_AUTOPILOT_BATCH), and the push path's dedup cache budget in MB (QUEEN_DEDUP_CACHE,
 * QUEEN_DEDUP_CACHE_MB; 0 = no cache).
 */
public record EngineSettings(String encryptionKeyHex, int zstdLevel, long popDefaultTimeoutMs,
                             String defaultSubscriptionMode, AutopilotMode popAutopilot, int popAutopilotBatch,
                             long dedupCacheMb) {

    /** What pop autopilot may do with a pop that asked for it. */
    public enum AutopilotMode {
        /** Sizes the pop. */
        ON,
        /** Works out and logs the sizing, and serves the pop with its own (or default) knobs. */
        SHADOW,
        /** Ignores the parameter: no lanes, no logs. */
        OFF;

        /**
         * The reference's spellings: on/shadow/off, the boolean ones for on and off, and dry-run for
         * shadow; unset or empty is on; anything else stops the boot.
         */
        static AutopilotMode from(Env env, String name) {
            String v = env.raw(name);
            if (v == null) {
                return ON;
            }
            return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "on", "true", "1", "yes" -> ON;
                case "shadow", "dry-run", "dryrun" -> SHADOW;
                case "off", "false", "0", "no" -> OFF;
                default -> throw Env.invalid(name, v, "expected on, shadow or off");
            };
        }
    }
    /**
     * Segment compression level when QUEEN_V2_ZSTD_LEVEL is unset. The reference defaults to 3; we
     * default to 1. Measured on 100-message segments (zstd-jni 1.5.7): JSON order events compress to
     * 29.3% at level 1 and 29.4% at level 3, text-like payloads to 49% and 48%, while level 3 costs
     * 1.5x and 2.6x the CPU, which on a push was a third of the broker's. Blobs of any level read the
     * same, so a broker may change level at any time.
     */
    public static final int DEFAULT_ZSTD_LEVEL = 1;

    /**
     * QUEEN_DEDUP_CACHE_MB when unset. The reference's 512 MB is a Rust process's own memory; ours
     * is the JVM heap that everything else shares, so the default is the smaller of 512 MB and a
     * sixteenth of the heap: 6 MB in the chart's default 512 MiB pod (a 102 MB heap), about 1.5 M
     * messages as fingerprints, 25 minutes at 1,000 msg/s. A full cache is most of the broker's live
     * set at a steady load, so its share sets the heap the pod keeps: an eighth (12 MB) held a
     * steady broker about 10 MB higher (broker/DESIGN.md, "Memory and start-up").
     */
    static long defaultDedupCacheMb(long maxHeapBytes) {
        return Math.max(1, Math.min(512, maxHeapBytes / 16 / (1024 * 1024)));
    }

    static EngineSettings from(Env env) {
        long timeout = env.longValue("DEFAULT_TIMEOUT",
                env.longValue("POP_DEFAULT_TIMEOUT_MS", 30_000, 0, 3_600_000), 0, 3_600_000);
        String mode = env.string("DEFAULT_SUBSCRIPTION_MODE", "new").trim();
        // The reference treats "new" and its aliases specially; anything else means everything retained.
        String normalised = switch (mode.toLowerCase(java.util.Locale.ROOT)) {
            case "new", "new-only", "new_only", "newonly" -> "new";
            default -> "all";
        };
        return new EngineSettings(env.raw("QUEEN_ENCRYPTION_KEY"),
                env.integer("QUEEN_V2_ZSTD_LEVEL", DEFAULT_ZSTD_LEVEL, 1, 22), timeout, normalised,
                AutopilotMode.from(env, "QUEEN_POP_AUTOPILOT"), env.integer("QUEEN_POP_AUTOPILOT_BATCH", 100, 1, 10_000),
                env.bool("QUEEN_DEDUP_CACHE", true) ? env.longValue("QUEEN_DEDUP_CACHE_MB",
                        defaultDedupCacheMb(Runtime.getRuntime().maxMemory()), 0, 1_048_576) : 0);
    }

    @Override
    public String toString() {
        return "EngineSettings[encryption=" + (encryptionKeyHex != null ? "set" : "unset") + ", zstdLevel=" + zstdLevel
                + ", popDefaultTimeoutMs=" + popDefaultTimeoutMs + ", defaultSubscriptionMode=" + defaultSubscriptionMode
                + ", popAutopilot=" + popAutopilot + ", popAutopilotBatch=" + popAutopilotBatch
                + ", dedupCacheMb=" + dedupCacheMb + "]";
    }
}
