package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code bin/bench --timers}: timers scheduled at a fixed rate through {@code POST /api/v1/timers}
 * ({@code --timer-batch} a call, each due {@code --timer-delay-ms} after the call is sent), fired by
 * the broker's sweeper into one queue, where one consumer waits in a long-poll pop (autoAck), as a
 * service waiting for its timers would. Each timer's payload carries its sequence number and the
 * due time asked for; {@link TimerLateness} turns the fired messages into figures. The first
 * {@code --warmup-seconds} of schedules are delivered but not counted.
 */
final class TimerBench {
    static final String QUEUE = "bench-timers";
    private static final int SCHEDULERS = 4;
    private static final int POP_BATCH = 1000;
    private static final int POP_TIMEOUT_MS = 1000;
    private static final long DRAIN_GRACE_SECONDS = 30;
    private static final byte[] OK = "\"ok\":true".getBytes(StandardCharsets.US_ASCII);

    private TimerBench() {
    }

    /** True when every timer was delivered and no schedule call failed. */
    static boolean run(SurfaceOptions o, BrokerHttp http) throws IOException, InterruptedException {
        http.postJson("/api/v1/configure", "{\"queue\":\"" + QUEUE + "\",\"options\":{}}", 200);
        long calls = Math.max(1, Math.round(o.timerRate() * (o.warmupSeconds() + o.seconds()) / o.timerBatch()));
        long warmupCalls = Math.round(o.timerRate() * o.warmupSeconds() / o.timerBatch());
        long timers = calls * o.timerBatch();
        System.out.printf("timers: %,.0f a second for %d s warm-up + %d s measured (%,d timers, %d a call, %d "
                        + "schedulers), each due %,d ms after its call; one parked consumer on queue %s%n",
                o.timerRate(), o.warmupSeconds(), o.seconds(), timers, o.timerBatch(), SCHEDULERS, o.timerDelayMs(),
                QUEUE);
        TimerLateness lateness = new TimerLateness(timers);
        Consumer consumer = new Consumer(http, lateness);
        Thread consumerThread = Thread.ofPlatform().name("bench-timer-consumer").start(consumer);

        Pacer pacer = new Pacer(o.timerRate(), o.timerBatch());
        AtomicLong next = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        Latencies scheduleCalls = new Latencies();
        long start = System.nanoTime();
        List<Thread> schedulers = new ArrayList<>();
        try (Progress progress = new Progress("timers scheduled", timers)) {
            for (int s = 0; s < SCHEDULERS; s++) {
                schedulers.add(Thread.ofPlatform().name("bench-timer-scheduler-" + s).start(() -> {
                    for (long k; (k = next.getAndIncrement()) < calls; ) {
                        pacer.awaitSlot(k);
                        try {
                            long sent = System.nanoTime();
                            int ok = schedule(http, o, k, k >= warmupCalls);
                            if (k >= warmupCalls) {
                                scheduleCalls.add((System.nanoTime() - sent) / 1000);
                            }
                            refused.addAndGet(o.timerBatch() - ok);
                        } catch (IOException e) {
                            refused.addAndGet(o.timerBatch());
                            firstError.compareAndSet(null, e.getMessage());
                        }
                        progress.add(o.timerBatch());
                    }
                }));
            }
            for (Thread t : schedulers) {
                t.join();
            }
        }
        double scheduleSeconds = (System.nanoTime() - start) / 1e9;
        consumer.awaitUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(o.timerDelayMs())
                + TimeUnit.SECONDS.toNanos(DRAIN_GRACE_SECONDS), timers - refused.get());
        consumerThread.interrupt();
        consumerThread.join();

        DeliveryLedger ledger = lateness.ledger();
        System.out.printf("%n== timers: %,.0f scheduled a second (achieved %,.0f), due %,d ms ahead; lateness "
                        + "against the due time asked for ==%n", o.timerRate(), timers / scheduleSeconds,
                o.timerDelayMs());
        FigureTable table = new FigureTable("", "count", "p50 ms", "p99 ms", "max ms");
        latencyRow(table, "fire (createdAt - due)", lateness.fire());
        latencyRow(table, "delivery to a parked pop (received - due)", lateness.delivery());
        latencyRow(table, "schedule call", scheduleCalls);
        System.out.print(table.render());
        System.out.printf("delivered %,d of %,d timers (%,d repeats), %,d refused or failed at schedule%n",
                ledger.unique(), timers, ledger.repeats(), refused.get());
        System.out.printf("target: delivery p99 under %.0f ms: %s%n", TimerLateness.TARGET_P99_MS,
                lateness.targetMet() ? "met" : "NOT met");
        if (firstError.get() != null || consumer.firstError.get() != null) {
            System.out.println("first error: " + (firstError.get() != null ? firstError.get() : consumer.firstError.get()));
        }
        return ledger.complete() && refused.get() == 0;
    }

    private static void latencyRow(FigureTable table, String name, Latencies l) {
        table.row(name, String.format("%,d", l.count()), FigureTable.ms(l.percentileMs(50)),
                FigureTable.ms(l.percentileMs(99)), FigureTable.ms(l.percentileMs(100)));
    }

    /** Schedule call {@code k}: timers k*batch .. k*batch+batch-1; returns how many were scheduled. */
    private static int schedule(BrokerHttp http, SurfaceOptions o, long k, boolean measured) throws IOException {
        StringBuilder sb = new StringBuilder(o.timerBatch() * 200).append("{\"operations\":[");
        long due = TimerLateness.nowMicros() + o.timerDelayMs() * 1000L;
        for (int i = 0; i < o.timerBatch(); i++) {
            long seq = k * o.timerBatch() + i;
            String payload = "{\"seq\":" + seq + ",\"dueMicros\":" + due + ",\"measured\":" + measured + "}";
            sb.append(i == 0 ? "" : ",").append("{\"op\":\"schedule\",\"queue\":\"").append(QUEUE)
              .append("\",\"timerKey\":\"t").append(seq).append("\",\"delayMs\":").append(o.timerDelayMs())
              .append(",\"txn\":\"t").append(seq).append("\",\"payload\":\"")
              .append(Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8))).append("\"}");
        }
        sb.append("]}");
        Http1Connection.Response res = http.call("POST", "/api/v1/timers",
                sb.toString().getBytes(StandardCharsets.UTF_8), 60_000);
        if (res.status() != 200) {
            String text = new String(res.body(), StandardCharsets.UTF_8);
            throw new IOException("POST /api/v1/timers answered " + res.status() + ": "
                    + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
        }
        return BrokerHttp.count(res.body(), OK);
    }

    /** The parked consumer: long-poll pops with autoAck, back to back, until interrupted. */
    private static final class Consumer implements Runnable {
        private final BrokerHttp http;
        private final TimerLateness lateness;
        private final AtomicReference<String> firstError = new AtomicReference<>();

        Consumer(BrokerHttp http, TimerLateness lateness) {
            this.http = http;
            this.lateness = lateness;
        }

        @Override
        public void run() {
            String path = "/api/v1/pop/queue/" + QUEUE + "?batch=" + POP_BATCH + "&wait=true&autoAck=true&timeout="
                    + POP_TIMEOUT_MS;
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Http1Connection.Response res = http.call("GET", path, null, POP_TIMEOUT_MS + 30_000);
                    long received = TimerLateness.nowMicros();
                    if (res.status() == 204) {
                        continue;
                    }
                    if (res.status() != 200) {
                        throw new IOException("pop answered " + res.status());
                    }
                    for (JsonNode m : BrokerHttp.JSON.readTree(res.body()).path("messages")) {
                        JsonNode d = m.path("data");
                        lateness.record(d.path("seq").asLong(), d.path("measured").asBoolean(),
                                d.path("dueMicros").asLong(), TimerLateness.epochMicros(m.path("createdAt").asText()),
                                received);
                    }
                    synchronized (this) {
                        notifyAll();
                    }
                } catch (IOException | RuntimeException e) {
                    firstError.compareAndSet(null, e.toString());
                }
            }
        }

        /** Waits until {@code expected} timers arrived or the deadline ({@link System#nanoTime()}) passed. */
        synchronized void awaitUntil(long deadline, long expected) throws InterruptedException {
            for (long left; lateness.ledger().unique() < expected && (left = deadline - System.nanoTime()) > 0; ) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }
}
