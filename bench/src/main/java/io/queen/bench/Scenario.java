package io.queen.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One partition count, on a fresh database and a fresh broker process. {@link #start()} warms up
 * until the broker's JIT compiler settles (on a side queue, unmeasured); {@link #round(int)}, called
 * {@value #THROUGHPUT_ROUNDS} times, pushes all messages, consumes them and runs the raw PostgreSQL
 * ceiling on the same database (the median round is reported); {@link #finish()} runs the
 * fixed-rate latency run and immediate pops on the idle queue. The bench alternates the rounds of
 * its partition counts, so another count's broker is alive but idle during a round: its
 * background jobs are counted in PostgreSQL's CPU (the stats refresh, about 120 ms every 10 s at
 * P=10,000).
 */
final class Scenario implements AutoCloseable {
    static final String QUEUE = "bench";
    static final String WARMUP_QUEUE = "bench-warmup";
    private static final double SETTLED_COMPILER_SHARE = 0.10;
    private static final int MAX_WARMUP_ROUNDS = 12;
    static final int THROUGHPUT_ROUNDS = 5;
    private static final int WARMUP_FIXED_RATE_SECONDS = 3;
    private static final int STALL_SECONDS = 60;
    private static final int SETTLE_SECONDS = 60;
    static final double PRIMED_COMPILER_SHARE = 0.05;
    static final int MAX_PRIME_ROUNDS = 3;

    private final BenchOptions options;
    private final PgServer pg;
    private final Path repoRoot;
    private final Path brokerDir;
    private final int partitions;
    private final String label;
    private final Payloads payloads;

    Scenario(BenchOptions options, PgServer pg, Path repoRoot, Path brokerDir, int partitions) {
        this.options = options;
        this.pg = pg;
        this.repoRoot = repoRoot;
        this.brokerDir = brokerDir;
        this.partitions = partitions;
        this.label = "P=" + partitions;
        this.payloads = new Payloads(options.payloadBytes());
    }

    // State between the phases; see start(), round(int) and finish().
    private PgServer.Database db;
    private BrokerProcess broker;
    private BrokerHttp http;
    private CpuMeter meter;
    private long touched;
    private final List<ScenarioResult.Round> rounds = new ArrayList<>();
    private final List<CeilingRun> ceilingRuns = new ArrayList<>();
    /** Broker CPU, bench client CPU and wall time of this scenario's measured phases, ceilings excluded. */
    private double brokerSeconds;
    private double clientSeconds;
    private double wallSeconds;

    /**
     * Fresh database and broker, then everything unmeasured: the partitions touched, the JIT
     * warm-up, round 0 and the ceiling's warm-up.
     */
    void start() throws IOException, SQLException, InterruptedException {
        db = pg.createDatabase(databaseName(partitions));
        Path log = repoRoot.resolve("bench/target/logs/broker-p" + partitions + ".log");
        broker = BrokerProcess.start(brokerDir, db, log, options.brokerMemoryMb());
        http = new BrokerHttp(broker.baseUri());
        say("broker pid " + broker.pid() + " at " + broker.baseUri() + ", database " + db.name()
                + ", log " + repoRoot.relativize(log));
        // Touch first: when the measured push came straight after the touch (one-message
        // pushes across partitions), the change of traffic made the JIT recompile what the
        // warm-up had compiled: 32% of the broker's CPU in a P=10 push phase, 2-20% since.
        touched = touchPartitions(http);
        warmUp(http, broker);
        unmeasuredRounds(http, broker, THROUGHPUT_ROUNDS * options.messages() + options.latencyMessages() + touched);
        ceilingWarmUp(db);
        meter = new CpuMeter(broker.pid(), CpuMeter.isLocal(db.host()));
    }

    /** Throughput round {@code round} (1-based) and its paired ceiling run. */
    void round(int round) throws IOException, SQLException, InterruptedException {
        Mark mark = mark();
        rounds.add(throughputRound(db, http, broker, meter, round));
        addSince(mark);
        ceilingRuns.add(ceilingRun(db, meter, round));
    }

    /** The latency run and the idle pops, then the broker stops and its database is dropped. */
    ScenarioResult finish() throws IOException, SQLException, InterruptedException {
        try {
            Mark mark = mark();
            ScenarioResult.LatencyRun latency = null;
            if (options.latencyMessages() > 0) {
                settle(db, "latency run");
                latency = latencyRun(http);
            }
            IdlePopPhase.Outcome idlePop = IdlePopPhase.run(db, http, QUEUE, options.batch());
            addSince(mark);
            say(String.format("idle queue, immediate empty pop: %.2f ms reading every partition, %.2f ms after "
                    + "the empty-scan watermark (mean of %d each)", idlePop.fullScanMs(), idlePop.watermarkMs(),
                    IdlePopPhase.POPS));
            ScenarioResult.CpuUse cpu = new ScenarioResult.CpuUse(brokerSeconds, clientSeconds, wallSeconds);
            double rss = broker.peakRssMb();
            say(String.format("broker peak RSS %.0f MB; CPU over these phases: broker %.0f s, bench client %.0f s, "
                    + "in %.0f s of wall time", rss, cpu.brokerSeconds(), cpu.clientSeconds(), cpu.wallSeconds()));
            // The ceiling's runs in between are its own figures, not the broker's phases.
            CpuMeter.Sample ceilingCpu = ceilingRuns.stream().map(CeilingRun::cpu)
                    .reduce(CpuMeter.Sample.ZERO, CpuMeter.Sample::plus);
            CpuMeter.PerMessage ceilingPerMessage = CpuMeter.PerMessage.between(CpuMeter.Sample.ZERO, ceilingCpu,
                    ceilingRuns.stream().mapToLong(c -> c.outcome().messages()).sum());
            say("raw PG ceiling CPU (the broker idle): " + ceilingPerMessage.describe());
            return new ScenarioResult(partitions, rounds, ceilingRuns.stream().map(CeilingRun::outcome).toList(),
                    latency, idlePop, rss, cpu, ceilingPerMessage);
        } finally {
            close();
        }
    }

    /** Stops the broker and drops the database; safe to call at any point, and again. */
    @Override
    public void close() throws IOException, SQLException {
        try {
            if (http != null) {
                http.close();
                http = null;
            }
            if (broker != null) {
                broker.close();
                broker = null;
            }
        } finally {
            if (db != null) {
                pg.dropDatabase(db);
                db = null;
            }
        }
    }

    /** The broker's and this client's CPU and the clock at the start of a measured phase. */
    private record Mark(double broker, double client, long nanos) {
    }

    private Mark mark() throws IOException {
        return new Mark(broker.cpuSeconds(), clientCpuSeconds(), System.nanoTime());
    }

    /** Adds what the measured phase begun at {@code mark} used. */
    private void addSince(Mark mark) throws IOException {
        brokerSeconds += broker.cpuSeconds() - mark.broker();
        clientSeconds += clientCpuSeconds() - mark.client();
        wallSeconds += (System.nanoTime() - mark.nanos()) / 1e9;
    }

    /** This run's database for {@code partitions}: the pid keeps two benchmarks on one server apart. */
    static String databaseName(int partitions) {
        return "queen_bench_p" + partitions + "_" + ProcessHandle.current().pid();
    }

    /**
     * A broker in service has long been running: the measured phases must not time its JIT
     * compiler, which on a small machine takes most of the broker's CPU for its first tens of
     * seconds. Rounds of {@code --warmup-messages} are pushed and consumed on a side queue, then
     * {@value #WARMUP_FIXED_RATE_SECONDS} s at the latency run's rate, until
     * the compiler threads used under {@value #SETTLED_COMPILER_SHARE} of the broker's CPU in a
     * round (or {@value #MAX_WARMUP_ROUNDS} rounds). Nothing of it is reported as a figure.
     */
    private void warmUp(BrokerHttp http, BrokerProcess broker) throws InterruptedException, IOException {
        long messages = options.warmupMessages();
        if (messages == 0) {
            return;
        }
        long start = System.nanoTime();
        double share = Double.NaN;
        int round = 0;
        while (round < MAX_WARMUP_ROUNDS) {
            round++;
            double cpu = broker.cpuSeconds();
            double compiler = broker.compilerCpuSeconds();
            warmUpRound(http, round, messages);
            share = (broker.compilerCpuSeconds() - compiler) / Math.max(broker.cpuSeconds() - cpu, 1e-9);
            if (!(share >= SETTLED_COMPILER_SHARE)) {
                break; // settled, or not measurable here (NaN): one round is all we can do
            }
        }
        say(String.format("warm-up: %d round(s) of %,d messages on queue %s in %.1f s (not measured); "
                        + "JIT compiler share of broker CPU in the last round: %s", round, messages, WARMUP_QUEUE,
                (System.nanoTime() - start) / 1e9, percent(share)));
    }

    /** A share as a whole percentage, "unknown" where it cannot be measured (NaN). */
    static String percent(double share) {
        return Double.isNaN(share) ? "unknown" : Math.round(share * 100) + "%";
    }

    private void warmUpRound(BrokerHttp http, int round, long messages) throws InterruptedException {
        long firstSeq = (round - 1) * messages;
        var plan = new PushPhase.Plan(WARMUP_QUEUE, Math.min(partitions, 10), messages / options.batch(),
                options.batch(), firstSeq, options.producers());
        PushPhase.Outcome push;
        try (Progress progress = new Progress(label + " warm-up " + round + " push", messages)) {
            push = PushPhase.run(http, plan, payloads, new Pacer(0, options.batch()), progress);
        }
        ConsumePhase.Outcome consume;
        try (Progress progress = new Progress(label + " warm-up " + round + " consume", messages)) {
            consume = ConsumePhase.start(http, WARMUP_QUEUE, options.consumers(), options.batch(),
                    new DeliveryLedger(firstSeq, messages), messages - push.notQueued(), progress, STALL_SECONDS)
                    .await();
        }
        String problems = problems(push) + problems(consume, messages - push.notQueued());
        // The latency run's paths (small pushes, parked pops woken one by one) compile too.
        long fixedRate = Math.round(options.latencyRate() * WARMUP_FIXED_RATE_SECONDS)
                / options.latencyPushBatch() * options.latencyPushBatch();
        if (fixedRate > 0) {
            var run = fixedRate(http, WARMUP_QUEUE, MAX_WARMUP_ROUNDS * messages + (round - 1) * fixedRate, fixedRate,
                    "warm-up " + round + " fixed rate");
            problems += problems(run.push()) + problems(run.delivery(), fixedRate - run.push().notQueued());
        }
        if (!problems.isEmpty()) {
            say("warm-up round " + round + ":" + problems);
        }
    }

    /**
     * Measures a queue in service, not its first day: every partition of the measured queue gets
     * one message, and it is consumed, before the clock starts, so the partition rows and the
     * consumers' cursor rows exist (creating them is a one-time cost per partition, which at
     * P=10,000 would otherwise be most of what a 50,000-message push phase measures). Returns the
     * number of messages it pushed.
     */
    private long touchPartitions(BrokerHttp http) throws InterruptedException {
        long start = System.nanoTime();
        long requests = (partitions + options.batch() - 1) / options.batch();
        long firstSeq = THROUGHPUT_ROUNDS * options.messages() + options.latencyMessages();
        var plan = new PushPhase.Plan(QUEUE, partitions, requests, options.batch(), firstSeq, options.producers(), true);
        PushPhase.Outcome push;
        try (Progress progress = new Progress(label + " touch push", plan.messages())) {
            push = PushPhase.run(http, plan, payloads, new Pacer(0, options.batch()), progress);
        }
        long target = plan.messages() - push.notQueued();
        ConsumePhase.Outcome consume;
        try (Progress progress = new Progress(label + " touch consume", target)) {
            // One message per partition: each pop takes a whole batch across partitions.
            consume = ConsumePhase.start(http, QUEUE, options.consumers(), options.batch(), options.batch(),
                    new DeliveryLedger(firstSeq, plan.messages()), target, progress, STALL_SECONDS).await();
        }
        say(String.format("touched all %,d partitions of queue %s with %,d messages in %.1f s (not measured)%s%s",
                partitions, QUEUE, plan.messages(), (System.nanoTime() - start) / 1e9, problems(push),
                problems(consume, target)));
        return plan.messages();
    }

    /**
     * Round 0: the measured queue's traffic, unmeasured, after the warm-up on the side queue.
     * In three measured rounds after the side-queue warm-up alone, the first was the slowest at
     * both partition counts (P=10,000: 70,000, 88,000 then 100,000 msg/s, PostgreSQL 8.7, 7.5 then
     * 7.2 us a message): the measured queue's own pages, partition rows and code paths were cold,
     * which is not a queue in service. With one round 0, the JIT compiler still took 7-35% of the
     * broker's CPU in measured round 1 of every run (0-6% in the rounds after the second), so
     * round 0 repeats, on fresh sequence numbers, until the compiler's share of a round is under
     * {@value #PRIMED_COMPILER_SHARE} (at most {@value #MAX_PRIME_ROUNDS} times).
     */
    private void unmeasuredRounds(BrokerHttp http, BrokerProcess broker, long firstSeq)
            throws InterruptedException, IOException {
        for (int k = 0; k < MAX_PRIME_ROUNDS; k++) {
            String name = "round 0" + (k == 0 ? "" : "." + k) + " (not measured)";
            long seq = firstSeq + k * options.messages();
            double compiler = broker.compilerCpuSeconds();
            double cpu = broker.cpuSeconds();
            consume(http, push(http, seq, name), seq, name);
            double share = (broker.compilerCpuSeconds() - compiler) / Math.max(broker.cpuSeconds() - cpu, 1e-9);
            say(name + ": JIT compiler share of the broker's CPU " + percent(share));
            if (share < PRIMED_COMPILER_SHARE) {
                return;
            }
        }
    }

    /**
     * One throughput round from a settled database: push all {@code --messages}, then consume them.
     * Round r uses sequence numbers from (r - 1) x messages, so every delivery is checked against
     * its own push. The figures of a single push phase of a few seconds ran 28-57% of the ceiling
     * on one build (JIT bursts, GC, a busy host), so the table reports the median round.
     */
    private ScenarioResult.Round throughputRound(PgServer.Database db, BrokerHttp http, BrokerProcess broker,
                                                 CpuMeter meter, int round)
            throws SQLException, InterruptedException, IOException {
        String name = "round " + round;
        settle(db, "push phase, " + name);
        long firstSeq = (round - 1) * options.messages();
        long maintenanceBefore = autovacuumRuns(db);
        CpuMeter.Sample before = meter.sample();
        double compilerBefore = broker.compilerCpuSeconds();
        PushPhase.Outcome push = push(http, firstSeq, name);
        CpuMeter.Sample after = meter.sample();
        CpuMeter.PerMessage pushCpu = CpuMeter.PerMessage.between(before, after, push.messages());
        double compilerShare = (broker.compilerCpuSeconds() - compilerBefore) / (after.broker() - before.broker());
        say(name + " push CPU: " + pushCpu.describe() + "; JIT compiler share of the broker's: "
                + percent(compilerShare) + "; autovacuum/autoanalyze runs finished meanwhile: "
                + (autovacuumRuns(db) - maintenanceBefore));
        ConsumePhase.Outcome consume = consume(http, push, firstSeq, name);
        return new ScenarioResult.Round(push, pushCpu, compilerShare, consume);
    }

    private PushPhase.Outcome push(BrokerHttp http, long firstSeq, String round) throws InterruptedException {
        var plan = new PushPhase.Plan(QUEUE, partitions, options.requests(), options.batch(), firstSeq,
                options.producers());
        try (Progress progress = new Progress(label + " " + round + " push", plan.messages())) {
            PushPhase.Outcome o = PushPhase.run(http, plan, payloads, new Pacer(options.rate(), options.batch()),
                    progress);
            say(String.format("%s push: %,d messages in %.1f s = %,.0f msg/s, request p50 %.1f ms p99 %.1f ms%s",
                    round, o.messages(), o.elapsedNanos() / 1e9, o.messagesPerSecond(),
                    o.requests().percentileMs(50), o.requests().percentileMs(99), problems(o)));
            return o;
        }
    }

    private ConsumePhase.Outcome consume(BrokerHttp http, PushPhase.Outcome push, long firstSeq, String round)
            throws InterruptedException {
        long target = push.messages() - push.notQueued();
        var ledger = new DeliveryLedger(firstSeq, push.messages());
        try (Progress progress = new Progress(label + " " + round + " consume", target)) {
            ConsumePhase.Outcome o = ConsumePhase.start(http, QUEUE, options.consumers(), options.batch(), ledger,
                    target, progress, STALL_SECONDS).await();
            say(String.format("%s consume: %,d messages in %.1f s = %,.0f msg/s, delivery p50 %.0f ms p99 %.0f ms; "
                            + "%s%s", round, o.delivered(), o.elapsedNanos() / 1e9, o.messagesPerSecond(),
                    o.latencies().percentileMs(50), o.latencies().percentileMs(99), o.calls().describe(),
                    problems(o, target)));
            return o;
        }
    }

    /**
     * Autovacuum and autoanalyze runs finished so far on the bench database's tables (TOAST
     * included). PostgreSQL's CPU a message in a push phase ran 6 to 10.5 us between rounds of one
     * run; these runs are counted in it, so the round's line says how many finished meanwhile.
     */
    private static long autovacuumRuns(PgServer.Database db) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) "
                     + "FROM pg_stat_all_tables")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Consumers long-poll while producers push at the fixed rate. */
    private ScenarioResult.LatencyRun latencyRun(BrokerHttp http) throws InterruptedException {
        long messages = options.latencyMessages();
        CpuMeter.Sample before = meter.sample();
        FixedRateRun run = fixedRate(http, QUEUE, THROUGHPUT_ROUNDS * options.messages(), messages, "latency run");
        CpuMeter.PerMessage cpu = CpuMeter.PerMessage.between(before, meter.sample(), run.delivery().delivered());
        PushPhase.Outcome push = run.push();
        ConsumePhase.Outcome o = run.delivery();
        say(String.format("latency run: %,d messages at %,.0f msg/s (achieved %,.0f), delivery p50 %.1f ms "
                        + "p99 %.1f ms max %.1f ms; push request p50 %.1f ms p99 %.1f ms; %s%s", messages,
                options.latencyRate(), push.messagesPerSecond(), o.latencies().percentileMs(50),
                o.latencies().percentileMs(99), o.latencies().percentileMs(100), push.requests().percentileMs(50),
                push.requests().percentileMs(99), o.calls().describe(),
                problems(push) + problems(o, messages - push.notQueued())));
        say("latency run: " + run.hostStalls().describe());
        say("latency run: " + cpu.describe());
        return new ScenarioResult.LatencyRun(push, o, run.hostStalls(), cpu);
    }

    /**
     * Each measured phase follows writes of a few hundred MB (the warm-up, the throughput phases,
     * the ceiling's own warm-up) that PostgreSQL cleans up in the next minute: autovacuum of the
     * segment and TOAST tables (insert thresholds) and a checkpoint. A latency run without this step
     * measured a P=10 p99 of 200 ms while that I/O went on, and a ceiling run sharing the machine
     * with it measured half the rate of the next one. So each phase starts once no autovacuum worker
     * is busy in this run's databases (at most {@value #SETTLE_SECONDS} s) and after a CHECKPOINT, both
     * unmeasured and reported.
     */
    private void settle(PgServer.Database db, String phase) throws SQLException, InterruptedException {
        long start = System.nanoTime();
        long deadline = start + SETTLE_SECONDS * 1_000_000_000L;
        int workers;
        try (Connection c = db.connect();
             PreparedStatement busy = c.prepareStatement("SELECT count(*) FROM pg_stat_activity "
                     + "WHERE backend_type = 'autovacuum worker' AND datname LIKE ?")) {
            // Any of this run's databases: the other partition count's rounds alternate with ours.
            busy.setString(1, "queen\\_bench\\_p%\\_" + ProcessHandle.current().pid());
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
            String checkpoint;
            try (Statement st = c.createStatement()) {
                st.execute("CHECKPOINT");
                checkpoint = "checkpoint done";
            } catch (SQLException e) {
                checkpoint = "no checkpoint (" + e.getMessage() + ")";  // needs superuser or pg_checkpoint
            }
            say(String.format("database settled for the %s in %.1f s (%s; %s) (not measured)", phase,
                    (System.nanoTime() - start) / 1e9,
                    workers == 0 ? "no autovacuum worker busy" : workers + " autovacuum worker(s) still busy",
                    checkpoint));
        }
    }

    /** A fixed-rate run's push side, delivery side and the host's stalls meanwhile. */
    private record FixedRateRun(PushPhase.Outcome push, ConsumePhase.Outcome delivery, HostStalls.Outcome hostStalls) {
    }

    /** Consumers long-poll while producers push {@code messages} at the latency rate. */
    private FixedRateRun fixedRate(BrokerHttp http, String queue, long firstSeq, long messages, String phase)
            throws InterruptedException {
        int perRequest = options.latencyPushBatch();
        var plan = new PushPhase.Plan(queue, partitions, messages / perRequest, perRequest, firstSeq,
                options.producers());
        var ledger = new DeliveryLedger(firstSeq, messages);
        try (Progress progress = new Progress(label + " " + phase, messages);
             Progress pushes = Progress.silent();
             HostStalls stalls = HostStalls.start()) {
            ConsumePhase consumers = ConsumePhase.start(http, queue, options.consumers(), options.batch(), ledger,
                    messages, progress, STALL_SECONDS);
            PushPhase.Outcome push = PushPhase.run(http, plan, payloads,
                    new Pacer(options.latencyRate(), perRequest), pushes);
            ConsumePhase.Outcome delivery = consumers.await();
            return new FixedRateRun(push, delivery, stalls.finish());
        }
    }

    /** One measured ceiling run and the CPU it used. */
    private record CeilingRun(CeilingPhase.Outcome outcome, CpuMeter.Sample cpu) {
    }

    /** The ceiling's writers and the database's pages for its tables, before any measured run. */
    private void ceilingWarmUp(PgServer.Database db) throws SQLException, InterruptedException {
        long warmSegments = Math.min(options.warmupMessages(), options.messages()) / options.batch();
        if (warmSegments > 0) {
            try (Progress progress = new Progress(label + " raw PG ceiling warm-up", warmSegments * options.batch())) {
                CeilingPhase.run(db, partitions, warmSegments, options.batch(), options.producers(), payloads, progress);
            }
        }
    }

    /**
     * The ceiling run paired with throughput round {@code round}, straight after it from a settled
     * database. The host's speed drifts over minutes (the ceiling alone measured 157,000 to 265,000
     * msg/s on one day), so each round's push is compared with a ceiling of the same minute rather
     * than with ceilings measured after all rounds. The broker is running but idle; its CPU is counted.
     */
    private CeilingRun ceilingRun(PgServer.Database db, CpuMeter meter, int round)
            throws SQLException, InterruptedException {
        settle(db, "raw PG ceiling run " + round);
        CpuMeter.Sample before = meter.sample();
        CeilingPhase.Outcome o;
        try (Progress progress = new Progress(label + " raw PG ceiling " + round, options.messages())) {
            o = CeilingPhase.run(db, partitions, options.requests(), options.batch(), options.producers(), payloads,
                    progress);
        }
        CpuMeter.Sample used = meter.sample().minus(before);
        say(String.format("round %d raw PG ceiling: %,d messages in %.2f s = %,.0f msg/s", round, o.messages(),
                o.elapsedNanos() / 1e9, o.messagesPerSecond()));
        return new CeilingRun(o, used);
    }

    /** What went wrong in a push phase, for a figure's line; empty when nothing did. */
    static String problems(PushPhase.Outcome o) {
        return o.notQueued() == 0 ? "" : String.format(" [%,d not queued; first error: %s]", o.notQueued(),
                o.firstError());
    }

    /** What went wrong in a consume phase of {@code target} messages; empty when nothing did. */
    static String problems(ConsumePhase.Outcome o, long target) {
        StringBuilder sb = new StringBuilder();
        if (!o.complete()) {
            sb.append(String.format(" [INCOMPLETE: %,d of %,d delivered, nothing new for %d s]", o.delivered(),
                    target, STALL_SECONDS));
        }
        if (o.repeats() > 0) {
            sb.append(String.format(" [%,d repeated deliveries]", o.repeats()));
        }
        if (o.ackFailures() > 0) {
            sb.append(String.format(" [%,d failed acks]", o.ackFailures()));
        }
        if (o.firstError() != null) {
            sb.append(" [first error: ").append(o.firstError()).append(']');
        }
        return sb.toString();
    }

    private static double clientCpuSeconds() {
        return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    private void say(String line) {
        System.out.println("[" + label + "] " + line);
        System.out.flush();
    }
}
