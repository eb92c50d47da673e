package io.queen.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToDoubleFunction;

/**
 * {@code bin/bench --cold}: a broker process started on a fresh database pushes at once, with no
 * warm-up, the shape of the default run's push (256-byte payloads here, {@value #BATCH} a request,
 * {@value #PRODUCERS} producers, {@value #PARTITIONS} partitions, a transactionId on each item).
 * The push goes on until its rate is steady (no rolling 5-s rate of the last 10 s more than 3% above
 * the best before them, at least 20 s in, at most {@code --cold-max-seconds}), then
 * {@code --warm-messages} more are the warm rate of the same process. Then the raw JDBC ceiling of
 * the same shape on the same database, warmed, in the same minutes.
 */
final class ColdBench {
    static final int BATCH = 100;
    static final int PRODUCERS = 4;
    static final int PARTITIONS = 10;
    static final int PAYLOAD_BYTES = 256;
    static final long FIRST = 50_000;
    static final String QUEUE = "cold";
    private static final int PER_SECOND_LINES = 20;
    private static final long SAMPLE_NANOS = 100_000_000L;
    private static final long SECOND = 1_000_000_000L;
    private static final long STEADY_MIN_NANOS = 20 * SECOND;
    private static final long STEADY_LOOKBACK_NANOS = 10 * SECOND;
    private static final double STEADY_RISE = 0.03;
    private static final long CEILING_WARMUP = 50_000;
    private static final long CEILING_MESSAGES = 200_000;
    /** Messages of the {@code --aot} training run: enough for the JIT's profiles to settle. */
    static final int TRAINING_MESSAGES = 300_000;

    // The targets of issue #25.
    static final double TARGET_FIRST_SHARE = 0.80;
    static final double TARGET_HEALTH_SECONDS = 2;
    static final double TARGET_90_SECONDS = 10;
    static final double TARGET_PEAK_RSS_MB = 256;
    private static final long READY_TIMEOUT_SECONDS = 120;
    /**
     * The cold broker's dedup cache unless QUEEN_DEDUP_CACHE_MB is set: the push runs until its rate
     * is steady, some 2 M messages with a transactionId each, past what the default cache of a 102 MB
     * heap (6 MB) holds as fingerprints (1.5 M). From there every push probes the database for the
     * dropped hashes and the rate falls to a sixth: that is the cache's size, not the JIT's warmth,
     * which is what this mode measures. 12 MB holds 3 M.
     */
    static final String COLD_DEDUP_CACHE_MB = "12";

    /** One cold start's figures; NaN where a figure could not be measured. */
    record Run(double healthSeconds, double readySeconds, double firstRate, double warmRate, double to90Seconds, double peakRssMb,
               double ceilingRate, double brokerCpuSeconds, double compilerCpuSeconds, String problems) {
        double firstShare() {
            return firstRate / warmRate;
        }

        double warmShareOfCeiling() {
            return warmRate / ceilingRate;
        }
    }

    private ColdBench() {
    }

    /** True when every push was queued. */
    static boolean run(WarmthOptions o, PgServer pg, Path repoRoot, Path brokerDir) throws Exception {
        List<String> aot = o.aot() ? List.of("-XX:AOTCache=" + train(o, pg, repoRoot, brokerDir)) : List.of();
        List<Run> runs = new ArrayList<>();
        for (int r = 1; r <= o.coldRuns(); r++) {
            runs.add(coldStart(o, pg, repoRoot, brokerDir, r, aot));
        }
        System.out.print(table(runs, o));
        boolean ok = true;
        for (int r = 0; r < runs.size(); r++) {
            if (!runs.get(r).problems().isEmpty()) {
                System.out.println("run " + (r + 1) + ":" + runs.get(r).problems());
                ok = false;
            }
        }
        return ok;
    }

    /**
     * {@code --aot}: a training run as bin/run's: the broker with {@code -XX:AOTCacheOutput} on a
     * database of its own, {@value #TRAINING_MESSAGES} messages of the cold push's shape, then SIGTERM;
     * the JVM writes the cache (classes loaded and linked, method profiles) as it exits. The cache is
     * only valid for this exact classpath, JDK and options, so it is trained here, not taken from
     * bin/run.
     */
    static Path train(WarmthOptions o, PgServer pg, Path repoRoot, Path brokerDir)
            throws IOException, SQLException, InterruptedException {
        Path cache = repoRoot.resolve("bench/target/aot/broker-cold.aot");
        Files.createDirectories(cache.getParent());
        Files.deleteIfExists(cache);
        PgServer.Database db = pg.createDatabase("queen_bench_aot_" + ProcessHandle.current().pid());
        long start = System.nanoTime();
        try {
            Path log = repoRoot.resolve("bench/target/logs/broker-aot-training.log");
            System.out.printf("[aot] training the ahead-of-time cache: %,d messages, then a clean stop%n",
                    TRAINING_MESSAGES);
            BrokerProcess broker = BrokerProcess.start(brokerDir, db, log, o.brokerMemoryMb(), Map.of(),
                    List.of("-XX:AOTCacheOutput=" + cache));
            try (BrokerHttp http = new BrokerHttp(broker.baseUri())) {
                var plan = new PushPhase.Plan(QUEUE, PARTITIONS, TRAINING_MESSAGES / BATCH, BATCH, 0, PRODUCERS);
                PushPhase.run(http, plan, new Payloads(PAYLOAD_BYTES), new Pacer(0, BATCH), Progress.silent(),
                        new AtomicBoolean());
            } finally {
                broker.stop(120);
            }
        } finally {
            pg.dropDatabase(db);
        }
        if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
            throw new IOException("the training run wrote no AOT cache (see bench/target/logs/broker-aot-training.log)");
        }
        System.out.printf("[aot] %s: %,d MB, trained in %.0f s%n", repoRoot.relativize(cache),
                Files.size(cache) >> 20, (System.nanoTime() - start) / 1e9);
        return cache;
    }

    private static Run coldStart(WarmthOptions o, PgServer pg, Path repoRoot, Path brokerDir, int runNumber,
                                 List<String> extraJvm) throws IOException, SQLException, InterruptedException {
        PgServer.Database db = pg.createDatabase("queen_bench_cold_" + ProcessHandle.current().pid() + "_" + runNumber);
        try {
            Path log = repoRoot.resolve("bench/target/logs/broker-cold-" + runNumber + ".log");
            Map<String, String> env = new HashMap<>(dedupCacheEnv());
            if (o.brokerWarmup() > 0) {
                env.put("QUEEN_WARMUP_MESSAGES", Long.toString(o.brokerWarmup()));
            }
            try (BrokerProcess broker = BrokerProcess.start(brokerDir, db, log, o.brokerMemoryMb(), env, extraJvm);
                 BrokerHttp http = new BrokerHttp(broker.baseUri())) {
                double health = broker.startToHealthyNanos() / 1e9;
                double ready = awaitReady(http, broker, "[cold " + runNumber + "]");
                Payloads payloads = new Payloads(PAYLOAD_BYTES);
                Curve c = push(o, http, broker, payloads, health, runNumber);
                double peak = broker.peakRssMb();
                double cpu = broker.cpuSeconds();
                double compiler = broker.compilerCpuSeconds();
                say(runNumber, String.format("broker log %s, JVM options: %s", repoRoot.relativize(log),
                        broker.jvmOptions()));
                say(runNumber, String.format("broker CPU %.1f s since start, of which JIT compiler threads %.1f s; "
                        + "peak RSS %.0f MB", cpu, compiler, peak));
                double ceiling = ceiling(db, payloads, runNumber);
                return new Run(health, ready, c.firstRate, c.warmRate, c.to90Seconds, peak, ceiling, cpu, compiler, c.problems);
            }
        } finally {
            pg.dropDatabase(db);
        }
    }

    /** QUEEN_DEDUP_CACHE_MB for the cold broker: the caller's if set, else {@link #COLD_DEDUP_CACHE_MB}. */
    static Map<String, String> dedupCacheEnv() {
        return System.getenv("QUEEN_DEDUP_CACHE_MB") != null ? Map.of()
                : Map.of("QUEEN_DEDUP_CACHE_MB", COLD_DEDUP_CACHE_MB);
    }

    /**
     * Seconds from the process start to the first {@code GET /ready} 200: a Service sends a pod
     * traffic only from then on, so the push starts there.
     */
    static double awaitReady(BrokerHttp http, BrokerProcess broker, String tag)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT_SECONDS * SECOND;
        while (!http.ready()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the broker did not answer /ready 200 within " + READY_TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(20);
        }
        double seconds = (System.nanoTime() - broker.startedNanos()) / 1e9;
        System.out.printf("%s /ready 200 %.2f s after the process start%n", tag, seconds);
        return seconds;
    }

    private record Curve(double firstRate, double warmRate, double to90Seconds, String problems) {
    }

    /** The push from the first /health 200 until the warm measurement is done, printed as it goes. */
    private static Curve push(WarmthOptions o, BrokerHttp http, BrokerProcess broker, Payloads payloads,
                              double healthSeconds, int runNumber) throws InterruptedException {
        ColdCurve curve = new ColdCurve();
        AtomicBoolean stop = new AtomicBoolean();
        long[] warm = {-1, -1, -1}; // start nanos, start count, end nanos
        Progress counter = Progress.silent();
        long pushStart = System.nanoTime();
        double startToPush = (pushStart - broker.startedNanos()) / 1e9;
        say(runNumber, String.format("fresh broker pid %d answered /health 200 %.2f s after its start; pushing "
                + "once ready, %d producers, %d a request, %d partitions, %d-byte payloads", broker.pid(), healthSeconds,
                PRODUCERS, BATCH, PARTITIONS, PAYLOAD_BYTES));
        Thread sampler = Thread.ofPlatform().name("bench-cold-sampler").start(() -> {
            int printed = 0;
            long next = pushStart + SAMPLE_NANOS;
            while (!stop.get()) {
                for (long wait; (wait = next - System.nanoTime()) > 0; ) {
                    try {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                next += SAMPLE_NANOS;
                long now = System.nanoTime() - pushStart;
                long count = counter.done();
                curve.add(now, count);
                if (now >= (printed + 1) * SECOND) {
                    printed++;
                    if (printed <= PER_SECOND_LINES || printed % 5 == 0) {
                        say(runNumber, String.format("  %5.1f s after start  second %3d: %,9.0f msg/s  (5-s rate "
                                + "%,.0f, total %,d, RSS %s MB)", startToPush + printed, printed,
                                curve.rate((printed - 1) * SECOND, printed * SECOND),
                                curve.rate(Math.max(0, printed - 5) * SECOND, printed * SECOND), count, rss(broker)));
                    }
                }
                if (warm[0] < 0 && (curve.steady(now, STEADY_MIN_NANOS, STEADY_LOOKBACK_NANOS, STEADY_RISE)
                        || now >= o.coldMaxSeconds() * SECOND)) {
                    warm[0] = now;
                    warm[1] = count;
                    say(runNumber, String.format("rate %s after %.0f s of push (%,d messages); measuring the warm rate "
                            + "over %,d more", now >= o.coldMaxSeconds() * SECOND ? "taken as steady" : "steady",
                            now / 1e9, count, o.warmMessages()));
                }
                if (warm[0] >= 0 && count >= warm[1] + o.warmMessages()) {
                    warm[2] = now;
                    stop.set(true);
                }
            }
        });
        var plan = new PushPhase.Plan(QUEUE, PARTITIONS, Integer.MAX_VALUE, BATCH, 0, PRODUCERS);
        PushPhase.Outcome outcome;
        try {
            outcome = PushPhase.run(http, plan, payloads, new Pacer(0, BATCH), counter, stop);
        } finally {
            stop.set(true);
            sampler.join();
        }
        double warmRate = warm[2] < 0 ? Double.NaN
                : o.warmMessages() / ((curve.nanosToCount(warm[1] + o.warmMessages()) - warm[0]) / 1e9);
        double firstRate = curve.rateOfFirst(FIRST);
        long at90 = Double.isNaN(warmRate) ? -1 : curve.firstNanosAtRate(0.9 * warmRate, SECOND);
        double to90 = at90 < 0 ? Double.NaN : startToPush + at90 / 1e9;
        say(runNumber, String.format("first %,d messages %,.0f msg/s; warm %,.0f msg/s; first / warm %s; 1-s rate "
                        + "first at 90%% of warm %s s after the process start", FIRST, firstRate, warmRate,
                percent(firstRate / warmRate), seconds(to90)));
        String problems = outcome.notQueued() == 0 ? "" : String.format(" [%,d not queued; first error: %s]",
                outcome.notQueued(), outcome.firstError());
        return new Curve(firstRate, warmRate, to90, problems);
    }

    /** The raw JDBC ceiling for the same shape, warmed with {@value #CEILING_WARMUP} messages first. */
    private static double ceiling(PgServer.Database db, Payloads payloads, int runNumber)
            throws SQLException, InterruptedException {
        try (Progress progress = new Progress("raw PG ceiling warm-up", CEILING_WARMUP)) {
            CeilingPhase.run(db, PARTITIONS, CEILING_WARMUP / BATCH, BATCH, PRODUCERS, payloads, progress);
        }
        CeilingPhase.Outcome o;
        try (Progress progress = new Progress("raw PG ceiling", CEILING_MESSAGES)) {
            o = CeilingPhase.run(db, PARTITIONS, CEILING_MESSAGES / BATCH, BATCH, PRODUCERS, payloads, progress);
        }
        say(runNumber, String.format("raw PG ceiling, same shape, %d writers: %,d messages in %.2f s = %,.0f msg/s",
                PRODUCERS, o.messages(), o.elapsedNanos() / 1e9, o.messagesPerSecond()));
        return o.messagesPerSecond();
    }

    /** Each figure per run, their median when there are several, the target and whether the median meets it. */
    static String table(List<Run> runs, WarmthOptions o) {
        List<String> header = new ArrayList<>(List.of("cold start"));
        for (int r = 1; r <= runs.size(); r++) {
            header.add("run " + r);
        }
        if (runs.size() > 1) {
            header.add("median");
        }
        header.add("target");
        header.add("");
        FigureTable t = new FigureTable(header.toArray(String[]::new));
        row(t, runs, "/health 200 after process start, s", Run::healthSeconds, ColdBench::seconds,
                "< " + seconds(TARGET_HEALTH_SECONDS), m -> m < TARGET_HEALTH_SECONDS);
        row(t, runs, "/ready 200 after process start, s", Run::readySeconds, ColdBench::seconds, "", null);
        row(t, runs, String.format("first %,d msg/s", FIRST), Run::firstRate, FigureTable::rate, "", null);
        row(t, runs, String.format("warm msg/s (%,d after steady)", o.warmMessages()), Run::warmRate,
                FigureTable::rate, "", null);
        row(t, runs, String.format("first %,d / warm", FIRST), Run::firstShare, ColdBench::percent,
                ">= " + percent(TARGET_FIRST_SHARE), m -> m >= TARGET_FIRST_SHARE);
        row(t, runs, "process start to 90% of warm, s", Run::to90Seconds, ColdBench::seconds,
                "< " + seconds(TARGET_90_SECONDS), m -> m < TARGET_90_SECONDS);
        row(t, runs, "peak RSS (VmHWM), MB", Run::peakRssMb, v -> String.format("%.0f", v),
                String.format("<= %.0f", TARGET_PEAK_RSS_MB), m -> m <= TARGET_PEAK_RSS_MB);
        row(t, runs, "broker CPU s, start to end of push", Run::brokerCpuSeconds, v -> String.format("%.1f", v),
                "", null);
        row(t, runs, "  JIT compiler CPU s", Run::compilerCpuSeconds, v -> String.format("%.1f", v), "", null);
        row(t, runs, "raw JDBC ceiling msg/s", Run::ceilingRate, FigureTable::rate, "", null);
        row(t, runs, "warm / ceiling", Run::warmShareOfCeiling, ColdBench::percent, "", null);
        return "== cold start: a fresh broker pushing once /ready (" + (o.brokerWarmup() == 0 ? "no warm-up"
                : String.format("QUEEN_WARMUP_MESSAGES=%,d", o.brokerWarmup())) + ", QUEEN_DEDUP_CACHE_MB="
                + dedupCacheEnv().getOrDefault("QUEEN_DEDUP_CACHE_MB", System.getenv("QUEEN_DEDUP_CACHE_MB")) + "); " + PAYLOAD_BYTES + "-byte payloads, " + BATCH
                + " a request, " + PRODUCERS + " producers, " + PARTITIONS + " partitions ==" + System.lineSeparator()
                + t.render();
    }

    private static void row(FigureTable t, List<Run> runs, String name, ToDoubleFunction<Run> figure,
                            java.util.function.DoubleFunction<String> format, String target,
                            java.util.function.DoublePredicate meets) {
        List<String> cells = new ArrayList<>(List.of(name));
        List<Double> values = new ArrayList<>();
        for (Run r : runs) {
            double v = figure.applyAsDouble(r);
            values.add(v);
            cells.add(Double.isNaN(v) ? "-" : format.apply(v));
        }
        double median = ColdCurve.median(values);
        if (runs.size() > 1) {
            cells.add(Double.isNaN(median) ? "-" : format.apply(median));
        }
        cells.add(target);
        cells.add(meets == null ? "" : WarmthBench.met(!Double.isNaN(median) && meets.test(median)));
        t.row(cells.toArray(String[]::new));
    }

    static String percent(double share) {
        return Double.isNaN(share) ? "-" : Math.round(share * 100) + "%";
    }

    static String seconds(double s) {
        return Double.isNaN(s) ? "never" : String.format("%.1f", s);
    }

    private static String rss(BrokerProcess broker) {
        try {
            return String.format("%.0f", broker.rssMb());
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    private static void say(int run, String line) {
        System.out.println("[cold " + run + "] " + line);
        System.out.flush();
    }
}
