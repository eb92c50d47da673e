package io.queen.bench;

import java.nio.file.Path;
import java.util.List;

/**
 * {@code bin/bench --cold} and {@code bin/bench --soak}: PostgreSQL, then the mode, each broker on
 * a fresh database of its own and started with whatever JVM options the bench gives brokers
 * ({@code --broker-memory-mb}, QUEEN_BENCH_BROKER_JAVA_OPTS, JAVA_TOOL_OPTIONS), which it prints.
 */
final class WarmthBench {
    private WarmthBench() {
    }

    /** Exits 0, 1 (a failure, a loss) or 2 (bad flags). */
    static void main(String[] args) {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println(WarmthOptions.USAGE);
            return;
        }
        WarmthOptions options;
        try {
            options = WarmthOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bin/bench: " + e.getMessage() + System.lineSeparator() + WarmthOptions.USAGE);
            System.exit(2);
            return;
        }
        Path repoRoot = Path.of("").toAbsolutePath();
        Path brokerDir = BenchMain.brokerDirOrExit(repoRoot);
        BenchMain.quietLibraries();
        try (PgServer pg = PgServer.locate(System.getenv("QUEEN_BENCH_PG_URL"))) {
            System.out.println("bin/bench --" + options.mode().flag + " on " + Runtime.getRuntime().availableProcessors()
                    + " CPUs (load average " + BenchMain.loadAverage() + "), " + pg.describe() + ": "
                    + pg.settingsSummary());
            boolean ok = switch (options.mode()) {
                case COLD -> ColdBench.run(options, pg, repoRoot, brokerDir);
                case SOAK -> SoakBench.run(options, pg, repoRoot, brokerDir);
            };
            System.exit(ok ? 0 : 1);
        } catch (Exception e) {
            System.err.println("bin/bench: " + e);
            System.exit(1);
        }
    }

    /** "met" or "NOT met". */
    static String met(boolean met) {
        return met ? "met" : "NOT met";
    }
}
