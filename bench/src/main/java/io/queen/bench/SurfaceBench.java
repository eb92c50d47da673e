package io.queen.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The surface modes' run: PostgreSQL, a fresh database, one broker child process started with
 * {@link SurfaceOptions#brokerEnvironment()}, then the selected mode; the database is dropped at
 * the end. The broker is warmed by each mode's own warm-up seconds, not the default run's rounds.
 */
final class SurfaceBench {
    private SurfaceBench() {
    }

    /** {@code bin/bench --kv | --timers | --streams [flags]}; exits 0, 1 (a failure) or 2 (bad flags). */
    static void main(String[] args) {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println(SurfaceOptions.USAGE);
            return;
        }
        SurfaceOptions options;
        try {
            options = SurfaceOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bin/bench: " + e.getMessage() + System.lineSeparator() + SurfaceOptions.USAGE);
            System.exit(2);
            return;
        }
        Path repoRoot = Path.of("").toAbsolutePath();
        Path brokerDir = BenchMain.brokerDirOrExit(repoRoot);
        BenchMain.quietLibraries();
        try {
            System.exit(run(options, repoRoot, brokerDir) ? 0 : 1);
        } catch (Exception e) {
            System.err.println("bin/bench: " + e);
            System.exit(1);
        }
    }

    /** True when the mode saw no failure (and, for timers, delivered every timer). */
    static boolean run(SurfaceOptions o, Path repoRoot, Path brokerDir) throws Exception {
        try (PgServer pg = PgServer.locate(System.getenv("QUEEN_BENCH_PG_URL"))) {
            System.out.println("bin/bench --" + o.mode().flag + " on " + Runtime.getRuntime().availableProcessors()
                    + " CPUs (load average " + BenchMain.loadAverage() + "), " + pg.describe() + ": "
                    + pg.settingsSummary());
            PgServer.Database db = pg.createDatabase("queen_bench_" + o.mode().flag + "_" + ProcessHandle.current().pid());
            try {
                Path log = repoRoot.resolve("bench/target/logs/broker-" + o.mode().flag + ".log");
                Map<String, String> env = SurfaceOptions.brokerEnvironment();
                try (BrokerProcess broker = BrokerProcess.start(brokerDir, db, log, o.brokerMemoryMb(), env);
                     BrokerHttp http = new BrokerHttp(broker.baseUri())) {
                    System.out.println("broker pid " + broker.pid() + " at " + broker.baseUri() + ", database "
                            + db.name() + ", log " + repoRoot.relativize(log));
                    System.out.println("broker KV refusal ladder raised for this run (the reference defaults "
                            + "would be measured instead): " + new TreeMap<>(env));
                    boolean ok = switch (o.mode()) {
                        case KV -> KvBench.run(o, db, http);
                        case TIMERS -> TimerBench.run(o, http);
                        case STREAMS -> StreamBench.run(o, http);
                    };
                    System.out.printf("broker peak RSS %.0f MB, CPU %.0f s%n", broker.peakRssMb(), broker.cpuSeconds());
                    return ok;
                }
            } finally {
                pg.dropDatabase(db);
            }
        }
    }
}
