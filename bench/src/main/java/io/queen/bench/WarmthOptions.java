package io.queen.bench;

import java.util.Map;
import java.util.Set;

/**
 * Flags of {@code bin/bench --cold} and {@code bin/bench --soak}: how a freshly started broker
 * warms up, and whether a steady one stays steady. Values are {@code --name value} or
 * {@code --name=value}.
 */
record WarmthOptions(Mode mode, int coldRuns, long warmMessages, int coldMaxSeconds, int soakMinutes, double soakRate,
                     int soakConsumers, int brokerMemoryMb, boolean aot, long brokerWarmup) {

    enum Mode {
        COLD("cold"), SOAK("soak");

        final String flag;

        Mode(String flag) {
            this.flag = flag;
        }
    }

    /** QUEEN_WARMUP_MESSAGES as the chart (values.yaml) and bin/run set it. */
    static final long DEFAULT_BROKER_WARMUP = 50_000;

    static final String USAGE = """
            usage: bin/bench --cold | --soak [flags]
              --cold                  a fresh broker pushes at once: /health time, rate per second, first
                                      50,000 against the warm rate in the same run, peak RSS, JDBC ceiling
              --soak                  a steady load for minutes: RSS, heap, msg/s and 5xx each minute, then
                                      loss, RSS growth and max RSS
              --cold-runs N           cold starts, each on a fresh database and broker process (1)
              --warm-messages N       messages of the warm measurement once the rate is steady (200000)
              --cold-max-seconds S    longest push before the warm measurement starts anyway (120)
              --soak-minutes M        length of the soak (60)
              --soak-rate R           messages pushed a second in the soak, 10 a request (1000)
              --soak-consumers N      consumers popping up to 100 and acking each batch (4)
              --aot                   first a training run writes the JDK's ahead-of-time cache (pushes,
                                      then a clean stop), and every broker started loads it, as bin/run
                                      and the image do; without it the broker starts with no cache
              --broker-warmup N       messages the broker pushes and consumes through itself before
                                      GET /ready answers 200 (QUEEN_WARMUP_MESSAGES), as the chart and
                                      bin/run have it (%d); the load starts once ready; 0 = none
              --broker-memory-mb N    the pod memory limit the broker's heap is sized from as the chart
                                      does (512; 0 = JVM defaults); QUEEN_BENCH_BROKER_JAVA_OPTS adds options
            PostgreSQL as for the default run (QUEEN_BENCH_PG_URL, else an embedded one).""".formatted(DEFAULT_BROKER_WARMUP);

    private static final Set<String> FLAGS = Set.of("cold-runs", "warm-messages", "cold-max-seconds", "soak-minutes",
            "soak-rate", "soak-consumers", "broker-memory-mb", "broker-warmup");

    /** The mode {@code args} select, or null. */
    static Mode selected(String... args) {
        for (String a : args) {
            for (Mode m : Mode.values()) {
                if (a.equals("--" + m.flag)) {
                    return m;
                }
            }
        }
        return null;
    }

    /** The options for {@code args} (one mode flag among them); IllegalArgumentException names the bad flag. */
    static WarmthOptions parse(String... args) {
        Flags.Parsed parsed = Flags.parse(args, Set.of("cold", "soak", "aot"), FLAGS, Map.of());
        Mode mode = null;
        boolean aot = false;
        for (String sw : parsed.switches()) {
            if (sw.equals("aot")) {
                aot = true;
                continue;
            }
            Mode m = selected("--" + sw);
            if (mode != null && mode != m) {
                throw new IllegalArgumentException("--" + mode.flag + " and --" + m.flag + " are separate runs");
            }
            mode = m;
        }
        Map<String, String> flags = parsed.values();
        if (mode == null) {
            throw new IllegalArgumentException("one of --cold, --soak is needed");
        }
        long warm = positive("warm-messages", flags.getOrDefault("warm-messages", "200000"));
        return new WarmthOptions(mode,
                (int) positive("cold-runs", flags.getOrDefault("cold-runs", "1")),
                (warm + ColdBench.BATCH - 1) / ColdBench.BATCH * ColdBench.BATCH,
                (int) positive("cold-max-seconds", flags.getOrDefault("cold-max-seconds", "120")),
                (int) positive("soak-minutes", flags.getOrDefault("soak-minutes", "60")),
                positive("soak-rate", flags.getOrDefault("soak-rate", "1000")),
                (int) positive("soak-consumers", flags.getOrDefault("soak-consumers", "4")),
                "0".equals(flags.getOrDefault("broker-memory-mb", "512").trim()) ? 0
                        : (int) positive("broker-memory-mb", flags.getOrDefault("broker-memory-mb", "512")), aot,
                "0".equals(flags.getOrDefault("broker-warmup", "").trim()) ? 0
                        : positive("broker-warmup", flags.getOrDefault("broker-warmup", Long.toString(DEFAULT_BROKER_WARMUP))));
    }

    private static long positive(String name, String v) {
        try {
            long n = Long.parseLong(v.trim());
            if (n > 0 && n <= Integer.MAX_VALUE) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // Reported below.
        }
        throw new IllegalArgumentException("--" + name + " must be a positive integer, got " + v);
    }
}
