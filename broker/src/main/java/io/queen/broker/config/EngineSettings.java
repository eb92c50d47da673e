package io.queen.broker.config;

/**
 * Message-path settings: the encryption-at-rest key (QUEEN_ENCRYPTION_KEY; kept out of toString),
 * the segment compression level, the pop defaults and pop autopilot (QUEEN_POP_AUTOPILOT, on by
 * default; off makes the broker ignore the parameter; the reference's "shadow" mode is not built)
 * with the batch it gives a pop that delegates it (QUEEN_POP_AUTOPILOT_BATCH).
 */
public record EngineSettings(String encryptionKeyHex, int zstdLevel, long popDefaultTimeoutMs,
                             String defaultSubscriptionMode, boolean popAutopilot, int popAutopilotBatch) {

    static EngineSettings from(Env env) {
        long timeout = env.longValue("DEFAULT_TIMEOUT",
                env.longValue("POP_DEFAULT_TIMEOUT_MS", 30_000, 0, 3_600_000), 0, 3_600_000);
        String mode = env.string("DEFAULT_SUBSCRIPTION_MODE", "new").trim();
        // The reference treats "new" and its aliases specially; anything else means everything retained.
        String normalised = switch (mode.toLowerCase(java.util.Locale.ROOT)) {
            case "new", "new-only", "new_only", "newonly" -> "new";
            default -> "all";
        };
        return new EngineSettings(env.raw("QUEEN_ENCRYPTION_KEY"), env.integer("QUEEN_V2_ZSTD_LEVEL", 3, 1, 22),
                timeout, normalised, env.bool("QUEEN_POP_AUTOPILOT", true),
                env.integer("QUEEN_POP_AUTOPILOT_BATCH", 100, 1, 10_000));
    }

    @Override
    public String toString() {
        return "EngineSettings[encryption=" + (encryptionKeyHex != null ? "set" : "unset") + ", zstdLevel=" + zstdLevel
                + ", popDefaultTimeoutMs=" + popDefaultTimeoutMs + ", defaultSubscriptionMode=" + defaultSubscriptionMode
                + ", popAutopilot=" + popAutopilot + ", popAutopilotBatch=" + popAutopilotBatch + "]";
    }
}
