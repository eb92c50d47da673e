package io.queen.broker.config;

/**
 * The broker's warm-up before it reports ready (broker/DESIGN.md, Memory and start-up).
 *
 * @param messages   QUEEN_WARMUP_MESSAGES: messages pushed and consumed through the broker's own
 *                   listener before {@code GET /ready} answers 200; 0 (the default) for none, so a
 *                   broker started by hand or by a test is ready at once. The chart and bin/run set it.
 * @param maxSeconds QUEEN_WARMUP_MAX_SECONDS: the warm-up stops after this long, however far it got
 */
public record WarmupSettings(long messages, int maxSeconds) {

    public static WarmupSettings none() {
        return new WarmupSettings(0, 0);
    }

    static WarmupSettings from(Env env) {
        return new WarmupSettings(env.longValue("QUEEN_WARMUP_MESSAGES", 0, 0, 100_000_000),
                env.integer("QUEEN_WARMUP_MAX_SECONDS", 30, 1, 600));
    }

    public boolean enabled() {
        return messages > 0;
    }
}
