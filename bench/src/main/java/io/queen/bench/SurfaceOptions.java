package io.queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Flags of the surface modes {@code bin/bench --kv | --timers | --streams}: each mode measures one
 * of the broker's side surfaces on its own broker, apart from the default push/consume run (and
 * its {@link BenchOptions}). Values are {@code --name value} or {@code --name=value}.
 */
record SurfaceOptions(Mode mode, int clients, int seconds, int warmupSeconds, List<Integer> kvBatches, int kvKeys,
                      double timerRate, int timerDelayMs, int timerBatch, int streamPartitions, int streamBatch,
                      double streamRate, double streamWindowSeconds, int streamFlushMs, int brokerMemoryMb) {

    enum Mode {
        KV("kv", 10), TIMERS("timers", 30), STREAMS("streams", 30);

        final String flag;
        /** The default of --seconds for this mode. */
        final int defaultSeconds;

        Mode(String flag, int defaultSeconds) {
            this.flag = flag;
            this.defaultSeconds = defaultSeconds;
        }
    }

    static final String USAGE = """
            usage: bin/bench --kv | --timers | --streams [flags]
              --kv                    KV get and put ops/s and latency per batch size, beside a JDBC upsert
              --timers                timer lateness at a fixed schedule rate: fire and parked-consumer delivery
              --streams               a tumbling-window count at a fixed input rate: sustained msg/s,
                                      cycles/s, window-close latency, a check of the emitted counts
              --clients N             concurrent clients: KV callers and JDBC writers, stream runners (8)
              --seconds S             measured time per phase: a KV phase, the timer schedule, the stream
                                      run (kv 10, timers 30, streams 30)
              --warmup-seconds S      unmeasured run of the same load first, per phase (5)
              --kv-batches A,B        operations per KV call, one phase each (1,100)
              --kv-keys N             keys written and read, split evenly between the clients (10000)
              --timer-rate R          timers scheduled per second (1000)
              --timer-delay-ms D      delay of each timer, due this far after its schedule call (1000)
              --timer-batch N         timers per schedule call (10)
              --stream-rate R         source messages pushed per second, spread over the partitions (2000)
              --stream-partitions P   partitions (keys) of the stream's source queue (10)
              --stream-window-seconds W  tumbling window length, event time (1)
              --stream-flush-ms F     interval of the flush that closes ripe windows (200)
              --stream-batch N        source messages at most per pop, so per cycle (100)
              --broker-memory-mb N    the pod memory limit the broker's heap is sized from (512; 0 = JVM defaults)
            The broker runs with the KV rate limits raised and the cell rate off, else the KV phases
            would measure the limiter. PostgreSQL as for the default run (QUEEN_BENCH_PG_URL).""";

    private static final Set<String> FLAGS = Set.of("clients", "seconds", "warmup-seconds", "kv-batches", "kv-keys",
            "timer-rate", "timer-delay-ms", "timer-batch", "stream-partitions", "stream-batch", "stream-rate",
            "stream-window-seconds", "stream-flush-ms", "broker-memory-mb");

    private static final Set<String> MODE_FLAGS = Set.of("kv", "timers", "streams");

    /** The surface mode {@code args} select, or null: the default run. */
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

    /** The options for {@code args} (exactly one mode flag among them); IllegalArgumentException names the bad flag. */
    static SurfaceOptions parse(String... args) {
        Flags.Parsed parsed = Flags.parse(args, MODE_FLAGS, FLAGS, Map.of());
        Mode mode = null;
        for (String sw : parsed.switches()) {
            Mode m = modeNamed(sw);
            if (mode != null && mode != m) {
                throw new IllegalArgumentException("--" + mode.flag + " and --" + m.flag + " are separate runs");
            }
            mode = m;
        }
        Map<String, String> flags = parsed.values();
        if (mode == null) {
            throw new IllegalArgumentException("one of --kv, --timers, --streams is needed");
        }
        List<Integer> kvBatches = intList("kv-batches", flags.getOrDefault("kv-batches", "1,100"));
        for (int b : kvBatches) {
            if (b > 256) { // QUEEN_KV_MAX_OPS_PER_CALL
                throw new IllegalArgumentException("--kv-batches: at most 256 operations per call, got " + b);
            }
        }
        int clients = positiveInt("clients", flags.getOrDefault("clients", "8"));
        int kvKeys = positiveInt("kv-keys", flags.getOrDefault("kv-keys", "10000"));
        int largest = kvBatches.stream().mapToInt(Integer::intValue).max().orElse(1);
        if (kvKeys / clients < largest) { // one call names distinct keys of its client's slice
            throw new IllegalArgumentException("--kv-keys " + kvKeys + " leaves fewer than " + largest
                    + " keys per client");
        }
        return new SurfaceOptions(mode, clients,
                positiveInt("seconds", flags.getOrDefault("seconds", Integer.toString(mode.defaultSeconds))),
                nonNegativeInt("warmup-seconds", flags.getOrDefault("warmup-seconds", "5")),
                kvBatches, kvKeys,
                positiveDouble("timer-rate", flags.getOrDefault("timer-rate", "1000")),
                nonNegativeInt("timer-delay-ms", flags.getOrDefault("timer-delay-ms", "1000")),
                positiveInt("timer-batch", flags.getOrDefault("timer-batch", "10")),
                positiveInt("stream-partitions", flags.getOrDefault("stream-partitions", "10")),
                positiveInt("stream-batch", flags.getOrDefault("stream-batch", "100")),
                positiveDouble("stream-rate", flags.getOrDefault("stream-rate", "2000")),
                windowSeconds(flags.getOrDefault("stream-window-seconds", "1")),
                positiveInt("stream-flush-ms", flags.getOrDefault("stream-flush-ms", "200")),
                nonNegativeInt("broker-memory-mb", flags.getOrDefault("broker-memory-mb", "512")));
    }

    /**
     * The broker environment of a surface run: the KV token buckets at their ceilings and the cell
     * rate off (the reference defaults, 100 writes and 200 reads a second per tenant and 2000 calls
     * a broker, would cap every KV figure).
     */
    static Map<String, String> brokerEnvironment() {
        return Map.of("QUEEN_KV_WRITE_RATE", "100000000", "QUEEN_KV_WRITE_BURST", "1000000000",
                "QUEEN_KV_READ_RATE", "100000000", "QUEEN_KV_READ_BURST", "1000000000", "QUEEN_KV_CELL_RATE", "0");
    }

    private static Mode modeNamed(String name) {
        for (Mode m : Mode.values()) {
            if (m.flag.equals(name)) {
                return m;
            }
        }
        return null;
    }

    private static int positiveInt(String name, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // Reported below.
        }
        throw new IllegalArgumentException("--" + name + " must be a positive integer, got " + v);
    }

    private static int nonNegativeInt(String name, String v) {
        return "0".equals(v.trim()) ? 0 : positiveInt(name, v);
    }

    private static double positiveDouble(String name, String v) {
        try {
            double d = Double.parseDouble(v.trim());
            if (d > 0 && Double.isFinite(d)) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // Reported below.
        }
        throw new IllegalArgumentException("--" + name + " must be a number > 0, got " + v);
    }

    /** A window of at least a millisecond, in whole milliseconds. */
    private static double windowSeconds(String v) {
        double s = positiveDouble("stream-window-seconds", v);
        if (s * 1000 < 1 - 1e-9 || Math.abs(s * 1000 - Math.rint(s * 1000)) > 1e-6) {
            throw new IllegalArgumentException("--stream-window-seconds must be whole milliseconds, got " + v);
        }
        return s;
    }

    /** The tumbling window of --stream-window-seconds, in milliseconds. */
    long streamWindowMs() {
        return Math.round(streamWindowSeconds * 1000);
    }

    private static List<Integer> intList(String name, String v) {
        List<Integer> out = new ArrayList<>();
        for (String part : v.split(",")) {
            out.add(positiveInt(name, part));
        }
        return List.copyOf(out);
    }
}
