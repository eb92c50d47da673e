package io.queen.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code bin/bench}: for each partition count, push then consume through a broker child process,
 * a fixed-rate latency run, and the raw PostgreSQL insert ceiling; prints progress, then a table.
 * Runs from the repository root (bin/bench changes into it); the broker's jar and lib/ folder are
 * taken from the directory named by the system property {@code queen.bench.broker}, else broker/target.
 */
public final class BenchMain {
    // Held strongly: JUL keeps loggers weakly, and a collected logger forgets its level.
    private static final Logger ROOT_LOGGER = Logger.getLogger("");

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        if (SurfaceOptions.selected(args) != null) {
            SurfaceBench.main(args); // --kv, --timers, --streams
            return;
        }
        if (WarmthOptions.selected(args) != null) {
            WarmthBench.main(args); // --cold, --soak
            return;
        }
        if (List.of(args).contains("--auth")) {
            AuthBench.main(List.of(args).stream().filter(a -> !a.equals("--auth")).toArray(String[]::new));
            return;
        }
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println(BenchOptions.USAGE);
            return;
        }
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bin/bench: " + e.getMessage() + System.lineSeparator() + BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        Path repoRoot = Path.of("").toAbsolutePath();
        Path brokerDir = brokerDirOrExit(repoRoot);
        quietLibraries();
        try {
            System.exit(run(options, repoRoot, brokerDir) ? 0 : 1);
        } catch (Exception e) {
            System.err.println("bin/bench: " + e.getMessage());
            System.exit(1);
        }
    }

    /** True when every run delivered every message. */
    private static boolean run(BenchOptions options, Path repoRoot, Path brokerDir) throws Exception {
        try (PgServer pg = PgServer.locate(System.getenv("QUEEN_BENCH_PG_URL"))) {
            System.out.println("bin/bench on " + Runtime.getRuntime().availableProcessors() + " CPUs (load average "
                    + loadAverage() + "), " + pg.describe() + ": " + pg.settingsSummary());
            // Every partition count's broker is started and warmed up first, then their rounds
            // alternate (P=10 round 1, P=10,000 round 1, ...): the host's speed drifts by as much as
            // 2x over minutes, and rounds of one count run minutes after the other's compared the
            // host more than the broker (P=10,000 / P=10 push measured 0.92x and 1.31x in two runs).
            List<Scenario> scenarios = new ArrayList<>();
            try {
                for (int partitions : options.partitionsList()) {
                    Scenario scenario = new Scenario(options, pg, repoRoot, brokerDir, partitions);
                    scenarios.add(scenario);
                    scenario.start();
                }
                for (int round = 1; round <= Scenario.THROUGHPUT_ROUNDS; round++) {
                    for (Scenario scenario : scenarios) {
                        scenario.round(round);
                    }
                }
                List<ScenarioResult> results = new ArrayList<>();
                for (Scenario scenario : scenarios) {
                    results.add(scenario.finish());
                }
                System.out.print(ReportTable.render(options, results));
                return results.stream().allMatch(ScenarioResult::complete);
            } finally {
                for (Scenario scenario : scenarios) {
                    scenario.close();
                }
            }
        }
    }

    /** The 1-minute load average: other work on the machine skews every figure. */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (java.io.IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /**
     * The broker under test: the directory named by {@code queen.bench.broker} (bin/bench's copy),
     * else broker/target; exits 2 when it holds no queen-broker.jar.
     */
    static Path brokerDirOrExit(Path repoRoot) {
        Path brokerDir = repoRoot.resolve(System.getProperty("queen.bench.broker", "broker/target"));
        if (!Files.isRegularFile(brokerDir.resolve("queen-broker.jar"))) {
            System.err.println("bin/bench: no queen-broker.jar in " + brokerDir + "; run from the repository root "
                    + "after building (bin/bench does both)");
            System.exit(2);
        }
        return brokerDir;
    }

    /** The embedded PostgreSQL logs its whole start-up at INFO. */
    static void quietLibraries() {
        ROOT_LOGGER.setLevel(Level.WARNING);
        for (var h : ROOT_LOGGER.getHandlers()) {
            h.setLevel(Level.WARNING);
        }
    }
}
