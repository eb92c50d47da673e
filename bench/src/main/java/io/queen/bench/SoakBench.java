package io.queen.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/bench --soak}: a steady load on one broker for {@code --soak-minutes}: producers push
 * {@code --soak-rate} messages a second, {@value #PUSH_BATCH} a request, round-robin over
 * {@value #PARTITIONS} partitions; {@code --soak-consumers} consumers pop up to {@value #POP_BATCH}
 * (from up to {@value #PARTITIONS_PER_POP} partitions a pop) and ack each batch. Each minute: the
 * broker's RSS, its heap in use (/metrics), the rates pushed and delivered and the 5xx answers; at
 * the end, whether every message was delivered exactly once, and the RSS growth.
 */
final class SoakBench {
    static final String QUEUE = "soak";
    static final int PARTITIONS = 100;
    static final int PUSH_BATCH = 10;
    static final int POP_BATCH = 100;
    static final int PARTITIONS_PER_POP = 10;
    static final int PRODUCERS = 4;
    private static final int PAYLOAD_BYTES = 256;
    private static final int STALL_SECONDS = 60;
    private static final long SECOND = 1_000_000_000L;

    static final double TARGET_GROWTH_PERCENT = 10;
    static final double TARGET_STEADY_RSS_MB = 160;

    /**
     * One minute's line. {@code rssMb} at its end, {@code maxRssMb} the most sampled (each second) in
     * it, {@code secondsOver} how many of its {@code samples} were above {@link #TARGET_STEADY_RSS_MB}.
     */
    record Minute(int minute, double rssMb, double maxRssMb, int secondsOver, int samples, double heapUsedMb,
                  double pushedPerSecond, double deliveredPerSecond, long serverErrors) {
    }

    private SoakBench() {
    }

    /** True when every message was delivered once and no request answered 5xx. */
    static boolean run(WarmthOptions o, PgServer pg, Path repoRoot, Path brokerDir) throws Exception {
        long total = Math.round(o.soakRate() * 60 * o.soakMinutes()) / PUSH_BATCH * PUSH_BATCH;
        PgServer.Database db = pg.createDatabase("queen_bench_soak_" + ProcessHandle.current().pid());
        try {
            Path log = repoRoot.resolve("bench/target/logs/broker-soak.log");
            // As the chart starts a pod: its warm-up before readiness, and with --aot the image's cache.
            List<String> aot = o.aot() ? List.of("-XX:AOTCache=" + ColdBench.train(o, pg, repoRoot, brokerDir)) : List.of();
            Map<String, String> env = Map.of("QUEEN_WARMUP_MESSAGES", Long.toString(o.brokerWarmup()));
            try (BrokerProcess broker = BrokerProcess.start(brokerDir, db, log, o.brokerMemoryMb(), env, aot);
                 BrokerHttp http = new BrokerHttp(broker.baseUri());
                 BrokerHttp metrics = new BrokerHttp(broker.baseUri());
                 Progress pushed = Progress.silent();
                 Progress delivered = Progress.silent()) {
                System.out.printf("soak: broker pid %d, log %s, JVM options: %s%n", broker.pid(),
                        repoRoot.relativize(log), broker.jvmOptions());
                ColdBench.awaitReady(http, broker, "soak:");
                System.out.printf("soak: %,.0f msg/s for %d min (%,d messages), %d a push, %d partitions, %d producers; "
                                + "%d consumers popping up to %d from up to %d partitions, acking each batch%n",
                        o.soakRate(), o.soakMinutes(), total, PUSH_BATCH, PARTITIONS, PRODUCERS, o.soakConsumers(),
                        POP_BATCH, PARTITIONS_PER_POP);
                System.out.printf("%6s  %7s  %11s  %9s  %12s  %9s  %12s  %4s%n", "minute", "RSS MB", "max RSS MB",
                        String.format("s >%.0f MB", TARGET_STEADY_RSS_MB), "heap used MB", "pushed/s", "delivered/s",
                        "5xx");
                DeliveryLedger ledger = new DeliveryLedger(0, total);
                ConsumePhase consumers = ConsumePhase.start(http, QUEUE, o.soakConsumers(), POP_BATCH,
                        PARTITIONS_PER_POP, ledger, total, delivered, STALL_SECONDS);
                List<Minute> minutes = new ArrayList<>();
                long start = System.nanoTime();
                Thread sampler = Thread.ofPlatform().name("bench-soak-sampler").start(() ->
                        sampleMinutes(o.soakMinutes(), start, broker, http, metrics, pushed, delivered, minutes));
                var plan = new PushPhase.Plan(QUEUE, PARTITIONS, total / PUSH_BATCH, PUSH_BATCH, 0, PRODUCERS);
                PushPhase.Outcome push = PushPhase.run(http, plan, new Payloads(PAYLOAD_BYTES),
                        new Pacer(o.soakRate(), PUSH_BATCH), pushed);
                sampler.join();
                long drainStart = System.nanoTime();
                ConsumePhase.Outcome consume = consumers.await();
                double peak = broker.peakRssMb();
                return report(o, total, push, consume, (System.nanoTime() - drainStart) / 1e9, minutes, peak,
                        http.serverErrors());
            }
        } finally {
            pg.dropDatabase(db);
        }
    }

    /** Samples the RSS each second and prints a line at the end of each minute. */
    private static void sampleMinutes(int count, long start, BrokerProcess broker, BrokerHttp http, BrokerHttp metrics,
                                      Progress pushed, Progress delivered, List<Minute> minutes) {
        long lastPushed = 0;
        long lastDelivered = 0;
        long lastErrors = 0;
        for (int m = 1; m <= count; m++) {
            double max = 0;
            int over = 0;
            int samples = 0;
            for (int s = 1; s <= 60; s++) {
                long due = start + ((m - 1) * 60L + s) * SECOND;
                for (long wait; (wait = due - System.nanoTime()) > 0; ) {
                    try {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                double now = rss(broker);
                if (!Double.isNaN(now)) {
                    samples++;
                    max = Math.max(max, now);
                    over += now > TARGET_STEADY_RSS_MB ? 1 : 0;
                }
            }
            long p = pushed.done();
            long d = delivered.done();
            long e = http.serverErrors();
            double heap;
            try {
                long bytes = metrics.heapUsedBytes();
                heap = bytes < 0 ? Double.NaN : bytes / 1048576.0;
            } catch (IOException ex) {
                heap = Double.NaN;
            }
            Minute minute = new Minute(m, rss(broker), max, over, samples, heap, (p - lastPushed) / 60.0,
                    (d - lastDelivered) / 60.0, e - lastErrors);
            synchronized (minutes) {
                minutes.add(minute);
            }
            System.out.printf("%6d  %7.0f  %11.0f  %9d  %12s  %,9.0f  %,12.0f  %4d%n", m, minute.rssMb(),
                    minute.maxRssMb(), minute.secondsOver(), Double.isNaN(heap) ? "-" : String.format("%.0f", heap),
                    minute.pushedPerSecond(), minute.deliveredPerSecond(), minute.serverErrors());
            System.out.flush();
            lastPushed = p;
            lastDelivered = d;
            lastErrors = e;
        }
    }

    private static boolean report(WarmthOptions o, long total, PushPhase.Outcome push, ConsumePhase.Outcome consume,
                                  double drainSeconds, List<Minute> minutes, double peakRss, long serverErrors) {
        boolean lost = push.notQueued() > 0 || !consume.complete() || consume.repeats() > 0;
        System.out.printf("pushed %,d of %,d (%,d not queued%s); delivered %,d once, %,d repeated, %,d failed acks, "
                        + "the rest drained in %.1f s after the push: %s%n", push.messages() - push.notQueued(), total,
                push.notQueued(), push.firstError() == null ? "" : ", first error: " + push.firstError(),
                consume.delivered(), consume.repeats(), consume.ackFailures(), drainSeconds,
                lost ? "LOST OR REPEATED MESSAGES" : "nothing lost");
        if (consume.firstError() != null) {
            System.out.println("first consumer error: " + consume.firstError());
        }
        System.out.printf("5xx answers: %,d%n", serverErrors);
        List<Double> rss = minutes.stream().map(Minute::rssMb).toList();
        List<Double> maxima = minutes.stream().map(Minute::maxRssMb).toList();
        if (rss.isEmpty()) {
            return false;
        }
        int base = SoakFigures.baseMinute(rss.size());
        double growth = SoakFigures.growthPercent(rss);
        double steadyMax = SoakFigures.steadyMax(maxima);
        System.out.printf("RSS at minute %d: %.0f MB, at the end (minute %d): %.0f MB, growth %+.1f%% (target within "
                        + "%.0f%%): %s%n", base, rss.get(base - 1), rss.size(), rss.getLast(), growth,
                TARGET_GROWTH_PERCENT, WarmthBench.met(Math.abs(growth) <= TARGET_GROWTH_PERCENT));
        System.out.printf("max RSS from minute %d on: %.0f MB (target <= %.0f MB steady): %s; peak RSS since the start "
                        + "(VmHWM) %.0f MB%n", base, steadyMax, TARGET_STEADY_RSS_MB,
                WarmthBench.met(steadyMax <= TARGET_STEADY_RSS_MB), peakRss);
        System.out.printf("one-second RSS samples above %.0f MB from minute %d on: %.1f%%%n", TARGET_STEADY_RSS_MB, base,
                SoakFigures.steadySharePercentOver(minutes.stream().map(Minute::secondsOver).toList(),
                        minutes.stream().map(Minute::samples).toList()));
        return !lost && serverErrors == 0;
    }

    private static double rss(BrokerProcess broker) {
        try {
            return broker.rssMb();
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
