package io.queen.broker.config;

/**
 * When the broker gives heap back to the operating system (broker/DESIGN.md, Memory and start-up).
 *
 * @param intervalSeconds     QUEEN_HEAP_TRIM_SECONDS: how often the allocation rate is looked at;
 *                            0 turns trimming off
 * @param quietMbPerSecond    QUEEN_HEAP_TRIM_QUIET_MB_S: below this allocation rate over a whole
 *                            interval the broker counts as quiet, and only then is a trim worth its
 *                            pause (a steady 1,000 msg/s allocated about 12 MB/s; a burst, hundreds)
 * @param growthMb            QUEEN_HEAP_TRIM_GROWTH_MB: the heap must have grown this much since the
 *                            last trim left it before another one runs
 */
public record HeapTrimSettings(int intervalSeconds, int quietMbPerSecond, int growthMb) {

    public static HeapTrimSettings from(Env env) {
        return new HeapTrimSettings(env.integer("QUEEN_HEAP_TRIM_SECONDS", 30, 0, 86_400),
                env.integer("QUEEN_HEAP_TRIM_QUIET_MB_S", 32, 1, 100_000),
                env.integer("QUEEN_HEAP_TRIM_GROWTH_MB", 4, 1, 1_048_576));
    }

    public boolean enabled() {
        return intervalSeconds > 0;
    }
}
