package io.queen.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/bench --auth}: what JWT authentication costs the push and consume phases (issue #23:
 * with the verification cached per token, push stays within {@value #TARGET_PERCENT}% of its speed
 * without auth). Two brokers on the same PostgreSQL, each on a fresh database of its own: one as
 * the default run starts it, one with {@code JWT_ENABLED=true}, {@code JWT_ALGORITHM=HS256} and a
 * freshly generated {@code JWT_SECRET}, to which every request (push, pop, ack) carries
 * {@code Authorization: Bearer <token>}, one read-write token the bench signs itself
 * ({@link JwtSigner}) as a client in service would reuse it. Both are warmed up first, then
 * {@value #ROUNDS} rounds of push then consume alternate between them (the order flips every
 * round, so neither always runs on the warmer host), and the medians are compared.
 */
final class AuthBench {
    static final int ROUNDS = 5;
    static final double TARGET_PERCENT = 5.0;
    private static final String QUEUE = "bench";
    private static final String WARMUP_QUEUE = "bench-warmup";
    private static final int MIN_WARMUP_ROUNDS = 2;
    private static final int MAX_WARMUP_ROUNDS = 8;
    private static final double SETTLED_COMPILER_SHARE = 0.10;
    private static final int STALL_SECONDS = 60;
    private static final int SETTLE_SECONDS = 30;
    static final String ROLE = "read-write";
    static final String SUBJECT = "queen-bench";

    private AuthBench() {
    }

    static final String USAGE = """
            usage: bin/bench --auth [flags]
              push then consume through a broker without auth and one with JWT_ENABLED=true (HS256),
              alternating over %d rounds each; reports the medians and the difference.
              Takes --messages, --partitions N, --producers, --consumers, --batch, --payload-bytes, --rate,
              --warmup-messages and --broker-memory-mb as bin/bench does (--partitions-list: its first
              count only; the latency-run flags are not used).""".formatted(ROUNDS);

    /** {@code args} without {@code --auth}. */
    static void main(String[] args) {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println(USAGE);
            return;
        }
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bin/bench --auth: " + e.getMessage() + System.lineSeparator() + USAGE);
            System.exit(2);
            return;
        }
        Path repoRoot = Path.of("").toAbsolutePath();
        Path brokerDir = BenchMain.brokerDirOrExit(repoRoot);
        BenchMain.quietLibraries();
        try {
            System.exit(new AuthBench.Run(options, repoRoot, brokerDir).run() ? 0 : 1);
        } catch (Exception e) {
            System.err.println("bin/bench --auth: " + e);
            System.exit(1);
        }
    }

    /** One round's figures of one broker. */
    record Round(double pushRate, double pushBrokerMicros, double consumeRate, double consumeBrokerMicros,
                 boolean complete) {
    }

    /** One of the two brokers, its database and its client. */
    private static final class Side implements AutoCloseable {
        final String name;
        final boolean auth;
        PgServer.Database db;
        BrokerProcess broker;
        BrokerHttp http;
        final List<Round> rounds = new ArrayList<>();

        Side(String name, boolean auth) {
            this.name = name;
            this.auth = auth;
        }

        @Override
        public void close() {
            if (http != null) {
                http.close();
            }
            if (broker != null) {
                broker.close();
            }
        }
    }

    private static final class Run {
        private final BenchOptions options;
        private final Path repoRoot;
        private final Path brokerDir;
        private final int partitions;
        private final Payloads payloads;

        Run(BenchOptions options, Path repoRoot, Path brokerDir) {
            this.options = options;
            this.repoRoot = repoRoot;
            this.brokerDir = brokerDir;
            this.partitions = options.partitionsList().get(0);
            this.payloads = new Payloads(options.payloadBytes());
        }

        boolean run() throws Exception {
            try (PgServer pg = PgServer.locate(System.getenv("QUEEN_BENCH_PG_URL"))) {
                String loadBefore = BenchMain.loadAverage();
                System.out.println("bin/bench --auth on " + Runtime.getRuntime().availableProcessors()
                        + " CPUs (load average " + loadBefore + "), " + pg.describe() + ": " + pg.settingsSummary());
                String secret = JwtSigner.newSecret();
                long now = Instant.now().getEpochSecond();
                String token = JwtSigner.hs256(secret.getBytes(StandardCharsets.UTF_8), SUBJECT, ROLE, now,
                        now + 3600);
                List<Side> sides = List.of(new Side("no auth", false), new Side("JWT HS256", true));
                try {
                    for (Side side : sides) {
                        start(pg, side, secret, token);
                    }
                    for (int round = 1; round <= ROUNDS; round++) {
                        // off/on, on/off, off/on, ...: each broker takes the first slot of a pair as often as the other.
                        List<Side> order = round % 2 == 1 ? sides : sides.reversed();
                        for (Side side : order) {
                            settle(side.db, side.name + " round " + round);
                            side.rounds.add(round(side, round));
                        }
                    }
                    String loadAfter = BenchMain.loadAverage();
                    System.out.print(report(options, partitions, sides.get(0).rounds, sides.get(1).rounds,
                            loadBefore, loadAfter));
                    return sides.stream().allMatch(s -> s.rounds.stream().allMatch(Round::complete));
                } finally {
                    for (Side side : sides) {
                        side.close();
                        if (side.db != null) {
                            pg.dropDatabase(side.db);
                        }
                    }
                }
            }
        }

        private void start(PgServer pg, Side side, String secret, String token)
                throws IOException, SQLException, InterruptedException {
            side.db = pg.createDatabase("queen_bench_auth_" + (side.auth ? "on" : "off") + "_"
                    + ProcessHandle.current().pid());
            Path log = repoRoot.resolve("bench/target/logs/broker-auth-" + (side.auth ? "on" : "off") + ".log");
            Map<String, String> env = side.auth
                    ? Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "HS256", "JWT_SECRET", secret)
                    : Map.of();
            side.broker = BrokerProcess.start(brokerDir, side.db, log, options.brokerMemoryMb(), env);
            side.http = new BrokerHttp(side.broker.baseUri(), side.auth ? "Bearer " + token : null);
            say(side, "broker pid " + side.broker.pid() + " at " + side.broker.baseUri() + ", database "
                    + side.db.name() + ", log " + repoRoot.relativize(log));
            if (side.auth) {
                requireAuthOn(side);
            }
            warmUp(side);
            // Round 0 on the measured queue, unmeasured: its partition rows and pages exist before round 1.
            pushAndConsume(side, QUEUE, ROUNDS * options.messages(), options.messages(), "round 0 (not measured)");
        }

        /** A push without a token must be refused, else the run would compare two brokers without auth. */
        private void requireAuthOn(Side side) throws IOException {
            try (BrokerHttp anonymous = new BrokerHttp(side.broker.baseUri())) {
                int status = anonymous.call("POST", "/api/v1/push",
                        "{\"items\":[]}".getBytes(StandardCharsets.UTF_8), 10_000).status();
                if (status != 401) {
                    throw new IOException("the JWT broker answered a push without a token with " + status
                            + ", not 401: authentication is not on");
                }
                say(side, "a push without a token is refused with 401; every bench request carries the token");
            }
        }

        private void warmUp(Side side) throws IOException, InterruptedException {
            long messages = options.warmupMessages();
            if (messages == 0) {
                return;
            }
            long start = System.nanoTime();
            double share = Double.NaN;
            int round = 0;
            while (round < MAX_WARMUP_ROUNDS) {
                round++;
                double cpu = side.broker.cpuSeconds();
                double compiler = side.broker.compilerCpuSeconds();
                pushAndConsume(side, WARMUP_QUEUE, (round - 1) * messages, messages, "warm-up " + round);
                share = (side.broker.compilerCpuSeconds() - compiler) / Math.max(side.broker.cpuSeconds() - cpu, 1e-9);
                if (round >= MIN_WARMUP_ROUNDS && !(share >= SETTLED_COMPILER_SHARE)) {
                    break;
                }
            }
            say(side, String.format("warm-up: %d round(s) of %,d messages in %.1f s (not measured); JIT compiler "
                    + "share of broker CPU in the last: %s", round, messages, (System.nanoTime() - start) / 1e9,
                    Scenario.percent(share)));
        }

        private Round round(Side side, int round) throws IOException, InterruptedException {
            long firstSeq = (round - 1) * options.messages();
            var plan = new PushPhase.Plan(QUEUE, partitions, options.requests(), options.batch(), firstSeq,
                    options.producers());
            double cpu0 = side.broker.cpuSeconds();
            PushPhase.Outcome push;
            try (Progress progress = new Progress(side.name + " round " + round + " push", plan.messages())) {
                push = PushPhase.run(side.http, plan, payloads, new Pacer(options.rate(), options.batch()), progress);
            }
            double cpu1 = side.broker.cpuSeconds();
            long target = push.messages() - push.notQueued();
            ConsumePhase.Outcome consume;
            try (Progress progress = new Progress(side.name + " round " + round + " consume", target)) {
                consume = ConsumePhase.start(side.http, QUEUE, options.consumers(), options.batch(),
                        new DeliveryLedger(firstSeq, push.messages()), target, progress, STALL_SECONDS).await();
            }
            double cpu2 = side.broker.cpuSeconds();
            Round r = new Round(push.messagesPerSecond(), (cpu1 - cpu0) * 1e6 / push.messages(),
                    consume.messagesPerSecond(), (cpu2 - cpu1) * 1e6 / Math.max(consume.delivered(), 1),
                    push.notQueued() == 0 && consume.complete() && consume.ackFailures() == 0);
            say(side, String.format("round %d: push %,.0f msg/s (%.1f s, request p50 %.1f ms p99 %.1f ms, broker "
                            + "%.1f us CPU/msg), consume %,.0f msg/s (broker %.1f us CPU/msg)%s%s", round,
                    r.pushRate(), push.elapsedNanos() / 1e9, push.requests().percentileMs(50),
                    push.requests().percentileMs(99), r.pushBrokerMicros(), r.consumeRate(), r.consumeBrokerMicros(),
                    Scenario.problems(push), Scenario.problems(consume, target)));
            return r;
        }

        private void pushAndConsume(Side side, String queue, long firstSeq, long messages, String phase)
                throws InterruptedException {
            // The side queue as the default run warms up: at most 10 partitions.
            int spread = queue.equals(QUEUE) ? partitions : Math.min(partitions, 10);
            var plan = new PushPhase.Plan(queue, spread, messages / options.batch(), options.batch(), firstSeq,
                    options.producers());
            PushPhase.Outcome push;
            try (Progress progress = new Progress(side.name + " " + phase + " push", plan.messages())) {
                push = PushPhase.run(side.http, plan, payloads, new Pacer(0, options.batch()), progress);
            }
            long target = plan.messages() - push.notQueued();
            ConsumePhase.Outcome consume;
            try (Progress progress = new Progress(side.name + " " + phase + " consume", target)) {
                consume = ConsumePhase.start(side.http, queue, options.consumers(), options.batch(),
                        new DeliveryLedger(firstSeq, plan.messages()), target, progress, STALL_SECONDS).await();
            }
            String problems = Scenario.problems(push) + Scenario.problems(consume, target);
            if (!problems.isEmpty()) {
                say(side, phase + ":" + problems);
            }
        }

        /** No autovacuum worker busy in either database (at most {@value #SETTLE_SECONDS} s), then a checkpoint. */
        private void settle(PgServer.Database db, String phase) throws SQLException, InterruptedException {
            long start = System.nanoTime();
            long deadline = start + SETTLE_SECONDS * 1_000_000_000L;
            try (Connection c = db.connect();
                 PreparedStatement busy = c.prepareStatement("SELECT count(*) FROM pg_stat_activity "
                         + "WHERE backend_type = 'autovacuum worker' AND datname LIKE ?")) {
                busy.setString(1, "queen\\_bench\\_auth\\_%\\_" + ProcessHandle.current().pid());
                int workers;
                while (true) {
                    try (ResultSet rs = busy.executeQuery()) {
                        rs.next();
                        workers = rs.getInt(1);
                    }
                    if (workers == 0 || System.nanoTime() > deadline) {
                        break;
                    }
                    Thread.sleep(250);
                }
                try (Statement st = c.createStatement()) {
                    st.execute("CHECKPOINT");
                } catch (SQLException e) {
                    // Needs superuser or pg_checkpoint; the autovacuum wait still applies.
                }
                if (workers > 0) {
                    System.out.printf("[%s] %d autovacuum worker(s) still busy after %d s%n", phase, workers,
                            SETTLE_SECONDS);
                }
            }
        }

        private static void say(Side side, String line) {
            System.out.println("[" + side.name + "] " + line);
            System.out.flush();
        }
    }

    /** The closing table: medians of each side's rounds and the difference. */
    static String report(BenchOptions o, int partitions, List<Round> off, List<Round> on, String loadBefore,
                         String loadAfter) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%n== bin/bench --auth: P=%d, %,d messages a round, median of %d rounds each, "
                        + "%d producers, %d consumers, batch %d, payload %d B; load average %s at start, %s at end ==%n",
                partitions, o.messages(), off.size(), o.producers(), o.consumers(), o.batch(), o.payloadBytes(),
                loadBefore, loadAfter));
        sb.append(String.format("%-34s %14s %14s %12s%n", "", "no auth", "JWT HS256", "difference"));
        double pushOff = median(off, Round::pushRate);
        double pushOn = median(on, Round::pushRate);
        rateRow(sb, "push msg/s", pushOff, pushOn);
        rateRow(sb, "end-to-end msg/s (consume phase)", median(off, Round::consumeRate), median(on, Round::consumeRate));
        cpuRow(sb, "broker CPU us/msg, push", median(off, Round::pushBrokerMicros), median(on, Round::pushBrokerMicros));
        cpuRow(sb, "broker CPU us/msg, consume", median(off, Round::consumeBrokerMicros),
                median(on, Round::consumeBrokerMicros));
        sb.append(String.format("rounds, push msg/s: no auth %s; JWT %s%n", rates(off), rates(on)));
        double cost = percentCost(pushOff, pushOn);
        sb.append(String.format("target: push with auth within %.0f%% of push without: %s (%s)%n", TARGET_PERCENT,
                cost <= TARGET_PERCENT ? "met" : "NOT met", signed(-cost)));
        return sb.toString();
    }

    /** How much slower {@code with} is than {@code without}, in percent (negative: faster). */
    static double percentCost(double without, double with) {
        return (without - with) / without * 100;
    }

    static double median(List<Round> rounds, java.util.function.ToDoubleFunction<Round> f) {
        double[] v = rounds.stream().mapToDouble(f).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static void rateRow(StringBuilder sb, String name, double off, double on) {
        sb.append(String.format("%-34s %,14.0f %,14.0f %12s%n", name, off, on, signed(-percentCost(off, on))));
    }

    private static void cpuRow(StringBuilder sb, String name, double off, double on) {
        sb.append(String.format("%-34s %14.1f %14.1f %12s%n", name, off, on, signed((on - off) / off * 100)));
    }

    private static String signed(double percent) {
        return String.format("%+.1f%%", percent);
    }

    private static String rates(List<Round> rounds) {
        return Arrays.toString(rounds.stream().mapToLong(r -> Math.round(r.pushRate())).toArray());
    }
}
