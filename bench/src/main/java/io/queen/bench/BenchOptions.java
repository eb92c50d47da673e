package io.queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line flags of {@code bin/bench}, each {@code --name value} or {@code --name=value}.
 * The message count is rounded up to a whole number of push requests, so every request and every
 * segment holds exactly {@code batch} messages.
 */
record BenchOptions(long messages, List<Integer> partitionsList, int producers, int consumers, int batch,
                    int payloadBytes, double rate, double latencyRate, int latencySeconds, int latencyPushBatch,
                    long warmupMessages, int brokerMemoryMb) {

    static final String USAGE = """
            usage: bin/bench [flags]
              --messages N            messages pushed then consumed per partition count (200000)
              --partitions-list A,B   partition counts to run, in order (10,10000); --partitions N runs one
              --producers N           concurrent HTTP producers, also the ceiling's JDBC writers (8)
              --consumers N           concurrent consumers: pop then batch ack (8)
              --batch N               items per push request, and pop batch size (100)
              --payload-bytes N       approximate JSON payload size (1024)
              --rate R                push rate limit in msg/s, 0 = unthrottled (0)
              --latency-rate R        fixed push rate of the latency run in msg/s (1000)
              --latency-seconds S     length of the latency run (30)
              --latency-push-batch N  items per push request in the latency run (10)
              --warmup-messages N     per warm-up round, pushed and consumed on a side queue until the
                                      broker's JIT settles (at most 12 rounds); also run through the
                                      ceiling before its clock starts; 0 = no warm-up (50000)
              --broker-memory-mb N    the broker runs as the chart runs it in a pod with this memory
                                      limit: broker/jvm.options and a heap of up to 20% of it, grown
                                      on demand; 0 = JVM defaults (512, the chart's default limit)
            Other modes: --kv, --timers, --streams (bin/bench --kv --help lists their flags);
            --cold, --soak (bin/bench --cold --help).
            --auth: push and consume with and without JWT auth (bin/bench --auth --help).
            PostgreSQL: QUEEN_BENCH_PG_URL=postgresql://user:pass@host:port/db, else an embedded one.
            Extra broker JVM options: QUEEN_BENCH_BROKER_JAVA_OPTS.""";

    private static final Set<String> FLAGS = Set.of("messages", "partitions-list", "partitions", "producers",
            "consumers", "batch", "payload-bytes", "rate", "latency-rate", "latency-seconds", "latency-push-batch",
            "warmup-messages", "broker-memory-mb");

    /** The options for {@code args}; throws IllegalArgumentException naming the bad flag. */
    static BenchOptions parse(String... args) {
        Map<String, String> flags = Flags.parse(args, Set.of(), FLAGS, Map.of("partitions", "partitions-list")).values();
        int batch = positiveInt("batch", flags.getOrDefault("batch", "100"));
        long messages = positiveLong("messages", flags.getOrDefault("messages", "200000"));
        return new BenchOptions(
                (messages + batch - 1) / batch * batch,
                intList("partitions-list", flags.getOrDefault("partitions-list", "10,10000")),
                positiveInt("producers", flags.getOrDefault("producers", "8")),
                positiveInt("consumers", flags.getOrDefault("consumers", "8")),
                batch,
                positiveInt("payload-bytes", flags.getOrDefault("payload-bytes", "1024")),
                nonNegative("rate", flags.getOrDefault("rate", "0")),
                nonNegative("latency-rate", flags.getOrDefault("latency-rate", "1000")),
                positiveInt("latency-seconds", flags.getOrDefault("latency-seconds", "30")),
                positiveInt("latency-push-batch", flags.getOrDefault("latency-push-batch", "10")),
                (long) nonNegative("warmup-messages", flags.getOrDefault("warmup-messages", "50000")) / batch * batch,
                nonNegativeInt("broker-memory-mb", flags.getOrDefault("broker-memory-mb", "512")));
    }

    /** Push requests of the throughput run. */
    long requests() {
        return messages / batch;
    }

    /** Messages of the latency run (0 when it is switched off with --latency-rate 0). */
    long latencyMessages() {
        long n = Math.round(latencyRate * latencySeconds);
        return (n + latencyPushBatch - 1) / latencyPushBatch * latencyPushBatch;
    }

    private static long positiveLong(String name, String v) {
        try {
            long n = Long.parseLong(v.trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // Reported below.
        }
        throw new IllegalArgumentException("--" + name + " must be a positive integer, got " + v);
    }

    private static int positiveInt(String name, String v) {
        long n = positiveLong(name, v);
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--" + name + " is too large: " + v);
        }
        return (int) n;
    }

    private static int nonNegativeInt(String name, String v) {
        return "0".equals(v.trim()) ? 0 : positiveInt(name, v);
    }

    private static double nonNegative(String name, String v) {
        try {
            double d = Double.parseDouble(v.trim());
            if (d >= 0 && Double.isFinite(d)) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // Reported below.
        }
        throw new IllegalArgumentException("--" + name + " must be a number >= 0, got " + v);
    }

    private static List<Integer> intList(String name, String v) {
        List<Integer> out = new ArrayList<>();
        for (String part : v.split(",")) {
            out.add(positiveInt(name, part));
        }
        return List.copyOf(out);
    }
}
