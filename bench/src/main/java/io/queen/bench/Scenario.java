package io.queen.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;

/**
 * One partition count, on a fresh database and a fresh broker process: push all messages, then
 * consume them all, then the fixed-rate latency run, then (broker stopped) the raw PostgreSQL
 * ceiling on the same database.
 */
final class Scenario {
    static final String QUEUE = "bench";
    private static final int STALL_SECONDS = 60;

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

    ScenarioResult run() throws IOException, SQLException, InterruptedException {
        // The pid keeps two benchmarks on one server apart.
        PgServer.Database db = pg.createDatabase("queen_bench_p" + partitions + "_" + ProcessHandle.current().pid());
        try {
            Path log = repoRoot.resolve("bench/target/logs/broker-p" + partitions + ".log");
            PushPhase.Outcome push;
            ConsumePhase.Outcome consume;
            ScenarioResult.LatencyRun latency = null;
            double rss;
            ScenarioResult.CpuUse cpu;
            try (BrokerProcess broker = BrokerProcess.start(brokerDir, db, log)) {
                say("broker pid " + broker.pid() + " at " + broker.baseUri() + ", database " + db.name()
                        + ", log " + repoRoot.relativize(log));
                BrokerHttp http = new BrokerHttp(broker.baseUri());
                double brokerCpu = broker.cpuSeconds();
                double clientCpu = clientCpuSeconds();
                long wallStart = System.nanoTime();
                push = push(http);
                consume = consume(http, push);
                if (options.latencyMessages() > 0) {
                    latency = latencyRun(http);
                }
                cpu = new ScenarioResult.CpuUse(broker.cpuSeconds() - brokerCpu, clientCpuSeconds() - clientCpu,
                        (System.nanoTime() - wallStart) / 1e9);
                rss = broker.peakRssMb();
                say(String.format("broker peak RSS %.0f MB; CPU over these phases: broker %.0f s, bench client %.0f s, "
                        + "in %.0f s of wall time", rss, cpu.brokerSeconds(), cpu.clientSeconds(), cpu.wallSeconds()));
            }
            CeilingPhase.Outcome ceiling = ceiling(db);
            return new ScenarioResult(partitions, push, consume, latency, rss, cpu, ceiling);
        } finally {
            pg.dropDatabase(db);
        }
    }

    private PushPhase.Outcome push(BrokerHttp http) throws InterruptedException {
        var plan = new PushPhase.Plan(QUEUE, partitions, options.requests(), options.batch(), 0, options.producers());
        try (Progress progress = new Progress(label + " push", plan.messages())) {
            PushPhase.Outcome o = PushPhase.run(http, plan, payloads, new Pacer(options.rate(), options.batch()),
                    progress);
            say(String.format("push: %,d messages in %.1f s = %,.0f msg/s%s", o.messages(), o.elapsedNanos() / 1e9,
                    o.messagesPerSecond(), problems(o)));
            return o;
        }
    }

    private ConsumePhase.Outcome consume(BrokerHttp http, PushPhase.Outcome push) throws InterruptedException {
        long target = push.messages() - push.notQueued();
        var ledger = new DeliveryLedger(0, push.messages());
        try (Progress progress = new Progress(label + " consume", target)) {
            ConsumePhase.Outcome o = ConsumePhase.start(http, QUEUE, options.consumers(), options.batch(), ledger,
                    target, progress, STALL_SECONDS).await();
            say(String.format("consume: %,d messages in %.1f s = %,.0f msg/s, delivery p50 %.0f ms p99 %.0f ms; %s%s",
                    o.delivered(), o.elapsedNanos() / 1e9, o.messagesPerSecond(), o.latencies().percentileMs(50),
                    o.latencies().percentileMs(99), o.calls().describe(), problems(o, target)));
            return o;
        }
    }

    /** Consumers long-poll while producers push at the fixed rate. */
    private ScenarioResult.LatencyRun latencyRun(BrokerHttp http) throws InterruptedException {
        long messages = options.latencyMessages();
        int perRequest = options.latencyPushBatch();
        var plan = new PushPhase.Plan(QUEUE, partitions, messages / perRequest, perRequest, options.messages(),
                options.producers());
        var ledger = new DeliveryLedger(options.messages(), messages);
        try (Progress progress = new Progress(label + " latency run", messages);
             Progress pushes = Progress.silent()) {
            ConsumePhase consumers = ConsumePhase.start(http, QUEUE, options.consumers(), options.batch(), ledger,
                    messages, progress, STALL_SECONDS);
            PushPhase.Outcome push = PushPhase.run(http, plan, payloads,
                    new Pacer(options.latencyRate(), perRequest), pushes);
            ConsumePhase.Outcome o = consumers.await();
            say(String.format("latency run: %,d messages at %,.0f msg/s (achieved %,.0f), delivery p50 %.1f ms "
                            + "p99 %.1f ms; %s%s", messages, options.latencyRate(), push.messagesPerSecond(),
                    o.latencies().percentileMs(50), o.latencies().percentileMs(99), o.calls().describe(),
                    problems(push) + problems(o, messages - push.notQueued())));
            return new ScenarioResult.LatencyRun(push, o);
        }
    }

    private CeilingPhase.Outcome ceiling(PgServer.Database db) throws SQLException, InterruptedException {
        try (Progress progress = new Progress(label + " raw PG ceiling", options.messages())) {
            CeilingPhase.Outcome o = CeilingPhase.run(db, partitions, options.requests(), options.batch(),
                    options.producers(), payloads, progress);
            say(String.format("raw PG ceiling: %,d messages in %.1f s = %,.0f msg/s", o.messages(),
                    o.elapsedNanos() / 1e9, o.messagesPerSecond()));
            return o;
        }
    }

    private static String problems(PushPhase.Outcome o) {
        return o.notQueued() == 0 ? "" : String.format(" [%,d not queued; first error: %s]", o.notQueued(),
                o.firstError());
    }

    private static String problems(ConsumePhase.Outcome o, long target) {
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
