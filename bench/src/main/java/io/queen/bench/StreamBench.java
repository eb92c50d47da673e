package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code bin/bench --streams}: a tumbling-window count over a keyed source at a fixed input rate,
 * driven as the JS client's Stream runner drives the broker. One producer pushes
 * {@code --stream-rate} messages a second round-robin over {@code --stream-partitions} partitions
 * (the keys), each carrying its event time (its due time on the fixed schedule, so a late producer
 * shows as latency). {@code --clients} runners pop with the query's consumer group, read the
 * state rows of the windows the batch touches, and commit one cycle: one upsert per window with
 * its new count, and the ack. A partition's watermark is the latest event time committed in it;
 * every {@code --stream-flush-ms} a flush reads each partition's ripe windows (state/get with
 * {@code ripe_at_or_before} the watermark) and in one cycle pushes each window's count to the sink
 * and deletes its row. A consumer parked on the sink times each result against its window's end.
 * Event times within a partition rise (one producer, pushes in order), so a ripe window gets no
 * more messages and its row is never written again after its flush.
 */
final class StreamBench {
    static final String SOURCE = "bench-stream-src";
    static final String SINK = "bench-stream-sink";
    static final String QUERY = "bench.stream";
    static final String GROUP = "streams." + QUERY;
    private static final int POP_TIMEOUT_MS = 1000;
    private static final int PUSH_TICK_MS = 10;
    private static final int MAX_PUSH_ITEMS = 1000;
    private static final long DRAIN_SECONDS = 30;
    private static final byte[] SUCCESS = "\"success\":true".getBytes(StandardCharsets.US_ASCII);

    private final SurfaceOptions o;
    private final BrokerHttp http;
    private final TumblingWindows windows;
    private final WindowLedger ledger;
    private final WindowCycles bodies;
    private final Map<String, Partition> partitions = new ConcurrentHashMap<>();
    private final long measureFromMs;
    private final long measureToMs;
    private volatile boolean stopping;

    private final AtomicLong pushed = new AtomicLong();
    private final AtomicLong consumed = new AtomicLong();
    private final AtomicLong pushedMeasured = new AtomicLong();
    private final AtomicLong consumedMeasured = new AtomicLong();
    private final AtomicLong cyclesMeasured = new AtomicLong();
    private final AtomicLong flushesMeasured = new AtomicLong();
    private final AtomicLong results = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final Latencies cycleLatency = new Latencies();

    /** A source partition as the runners saw it: its name and watermark, and how far the flush closed it. */
    private static final class Partition {
        final String name;
        final AtomicLong watermarkMs = new AtomicLong(Long.MIN_VALUE);
        long flushedThroughMs = Long.MIN_VALUE; // the flusher thread's own

        Partition(String name) {
            this.name = name;
        }
    }

    private StreamBench(SurfaceOptions o, BrokerHttp http, String queryId, long startMs) {
        this.o = o;
        this.http = http;
        this.windows = new TumblingWindows(o.streamWindowMs());
        this.ledger = new WindowLedger(windows);
        this.bodies = new WindowCycles(queryId, GROUP, SINK, windows);
        this.measureFromMs = startMs + o.warmupSeconds() * 1000L;
        this.measureToMs = measureFromMs + o.seconds() * 1000L;
    }

    /** True when the emitted counts check out and no push or cycle failed. */
    static boolean run(SurfaceOptions o, BrokerHttp http) throws IOException, InterruptedException {
        for (String q : List.of(SOURCE, SINK)) {
            http.postJson("/api/v1/configure", "{\"queue\":\"" + q + "\",\"options\":{}}", 200);
        }
        String queryId = http.postJson("/streams/v1/queries", "{\"name\":\"" + QUERY + "\",\"source_queue\":\"" + SOURCE
                + "\",\"sink_queue\":\"" + SINK + "\",\"config_hash\":\"tumbling-count-" + o.streamWindowMs() + "\"}",
                200).path("query_id").asText();
        System.out.printf("streams: tumbling %,d ms window count over %s (%d partitions = keys) into %s; input "
                        + "%,.0f msg/s for %d s warm-up + %d s measured; %d runners, pop batch %d, flush every %d ms%n",
                o.streamWindowMs(), SOURCE, o.streamPartitions(), SINK, o.streamRate(), o.warmupSeconds(), o.seconds(),
                o.clients(), o.streamBatch(), o.streamFlushMs());
        return new StreamBench(o, http, queryId, System.currentTimeMillis() + 200).measure();
    }

    private boolean measure() throws InterruptedException {
        List<Thread> loops = new ArrayList<>();
        for (int c = 0; c < o.clients(); c++) {
            loops.add(loop("bench-stream-runner-" + c, this::ingestOnce));
        }
        loops.add(loop("bench-stream-flush", this::flushOnce));
        loops.add(loop("bench-stream-sink", this::receiveOnce));
        long total = Math.round(o.streamRate() * (measureToMs - measureFromMs + o.warmupSeconds() * 1000L) / 1000);
        Thread producer = Thread.ofPlatform().name("bench-stream-producer").start(() -> produce(total));
        producer.join();
        long backlog = pushed.get() - consumed.get();
        long drainStart = System.nanoTime();
        long deadline = drainStart + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        while ((consumed.get() < pushed.get() || ledger.unemittedClosed() > 0) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
        stopping = true;
        for (Thread t : loops) {
            t.join();
        }
        return report(total, backlog, drainSeconds);
    }

    private boolean report(long total, long backlog, double drainSeconds) {
        double seconds = (measureToMs - measureFromMs) / 1000.0;
        Latencies close = ledger.closeLatency(measureFromMs, measureToMs);
        WindowLedger.Verdict v = ledger.verdict();
        System.out.printf("%n== streams: tumbling %,d ms count, %d keys, %,.0f msg/s offered by schedule, %d runners ==%n",
                o.streamWindowMs(), o.streamPartitions(), o.streamRate(), o.clients());
        FigureTable table = new FigureTable("", "figure");
        table.row("input msg/s pushed (offered)", FigureTable.rate(pushedMeasured.get() / seconds));
        table.row("input msg/s consumed (sustained)", FigureTable.rate(consumedMeasured.get() / seconds));
        table.row("ingest cycles/s", FigureTable.rate(cyclesMeasured.get() / seconds));
        table.row("messages a cycle (mean)", cyclesMeasured.get() == 0 ? "-"
                : String.format("%.1f", consumedMeasured.get() / (double) cyclesMeasured.get()));
        table.row("ingest state/get + cycle p50 / p99 ms", FigureTable.ms(cycleLatency.percentileMs(50)) + " / "
                + FigureTable.ms(cycleLatency.percentileMs(99)));
        table.row("flush cycles/s", FigureTable.rate(flushesMeasured.get() / seconds));
        table.row("windows timed", String.format("%,d", close.count()));
        table.row("window close p50 / p99 / max ms", FigureTable.ms(close.percentileMs(50)) + " / "
                + FigureTable.ms(close.percentileMs(99)) + " / " + FigureTable.ms(close.percentileMs(100)));
        table.row("failed pushes or cycles", Long.toString(failures.get()));
        System.out.print(table.render());
        System.out.printf("pushed %,d of %,d scheduled messages; backlog when the input stopped %,d, drained in %.1f s%n",
                pushed.get(), total, backlog, drainSeconds);
        System.out.printf("check: %,d closed windows, %,d emitted (%,d results read), sum of emitted counts %,d, "
                        + "messages pushed in closed windows %,d: %s%n", v.closedWindows(), v.emittedWindows(),
                results.get(), v.emittedSum(), v.pushedInClosed(), v.ok() ? "OK" : "MISMATCH");
        v.problems().stream().limit(10).forEach(p -> System.out.println("  " + p));
        if (firstError.get() != null) {
            System.out.println("first error: " + firstError.get());
        }
        return v.ok() && failures.get() == 0;
    }

    private boolean measured(long wallMs) {
        return wallMs >= measureFromMs && wallMs < measureToMs;
    }

    // ---- the producer: message i is due at start + i / rate, in partition i mod P -------------------

    private void produce(long total) {
        long startMs = measureFromMs - o.warmupSeconds() * 1000L;
        for (long next = 0; next < total && !stopping; ) {
            long now = System.currentTimeMillis();
            long due = Math.min(total, (long) Math.floor((now - startMs) * o.streamRate() / 1000) + 1);
            if (due <= next) {
                sleepMs(PUSH_TICK_MS);
                continue;
            }
            long upTo = Math.min(due, next + MAX_PUSH_ITEMS);
            StringBuilder sb = new StringBuilder(64 + (int) (upTo - next) * 96).append("{\"items\":[");
            for (long i = next; i < upTo; i++) {
                sb.append(i == next ? "" : ",").append("{\"queue\":\"").append(SOURCE).append("\",\"partition\":\"")
                  .append(Payloads.partitionName(i, o.streamPartitions())).append("\",\"payload\":{\"seq\":").append(i)
                  .append(",\"").append(WindowCycles.EVENT_TIME).append("\":").append(eventMs(startMs, i)).append("}}");
            }
            sb.append("]}");
            int items = (int) (upTo - next);
            try {
                JsonNode refused = http.pushExpectingQueued(sb.toString().getBytes(StandardCharsets.UTF_8), items);
                if (refused != null) {
                    throw new IOException("push not all queued: " + refused);
                }
                for (long i = next; i < upTo; i++) {
                    ledger.pushed(Payloads.partitionName(i, o.streamPartitions()), eventMs(startMs, i));
                }
                pushed.addAndGet(items);
                if (measured(System.currentTimeMillis())) {
                    pushedMeasured.addAndGet(items);
                }
            } catch (IOException | RuntimeException e) {
                fail(e);
            }
            next = upTo;
        }
    }

    private long eventMs(long startMs, long i) {
        return startMs + (long) Math.floor(i * 1000 / o.streamRate());
    }

    // ---- a runner: pop a batch, read its windows' rows, one cycle of upserts and the ack -----------

    private void ingestOnce() throws IOException {
        Http1Connection.Response res = http.call("GET", "/api/v1/pop/queue/" + SOURCE + "?batch=" + o.streamBatch()
                + "&consumerGroup=" + GROUP + "&subscriptionMode=all&wait=true&timeout=" + POP_TIMEOUT_MS, null,
                POP_TIMEOUT_MS + 30_000);
        if (res.status() == 204) {
            return;
        }
        JsonNode batch = ok(res, "pop").path("messages");
        if (batch.isEmpty()) {
            return;
        }
        long started = System.nanoTime();
        long[] times = new long[batch.size()];
        for (int i = 0; i < times.length; i++) {
            times[i] = batch.get(i).path("data").path(WindowCycles.EVENT_TIME).asLong();
        }
        String partitionId = batch.get(0).path("partitionId").asText();
        Map<Long, Long> counts = windows.counts(times);
        Map<Long, Long> stored = WindowCycles.storedCounts(
                http.postJson("/streams/v1/state/get", bodies.stateOf(partitionId, counts.keySet()), 200));
        counts.replaceAll((start, n) -> n + stored.getOrDefault(start, 0L));
        cycle(bodies.ingest(batch, counts));
        long done = System.currentTimeMillis();
        consumed.addAndGet(batch.size());
        if (measured(done)) {
            consumedMeasured.addAndGet(batch.size());
            cyclesMeasured.incrementAndGet();
            cycleLatency.add((System.nanoTime() - started) / 1000);
        }
        long latest = times[0];
        for (long t : times) {
            latest = Math.max(latest, t);
        }
        partitions.computeIfAbsent(partitionId, id -> new Partition(batch.get(0).path("partition").asText()))
                .watermarkMs.accumulateAndGet(latest, Math::max);
    }

    // ---- the flush: per partition whose watermark passed a window end, emit and delete ripe rows ---

    private void flushOnce() throws IOException {
        long tick = System.nanoTime();
        for (var e : partitions.entrySet()) {
            Partition p = e.getValue();
            long ripeAt = p.watermarkMs.get();
            long closedThrough = windows.start(ripeAt); // the latest window end at or before the watermark
            if (ripeAt == Long.MIN_VALUE || closedThrough <= p.flushedThroughMs) {
                continue;
            }
            JsonNode ripe = http.postJson("/streams/v1/state/get", bodies.ripeState(e.getKey(), ripeAt), 200);
            if (!ripe.path("rows").isEmpty()) {
                cycle(bodies.flush(e.getKey(), p.name, ripe));
                if (measured(System.currentTimeMillis())) {
                    flushesMeasured.incrementAndGet();
                }
            }
            p.flushedThroughMs = closedThrough;
        }
        sleepMs(o.streamFlushMs() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - tick));
    }

    // ---- the sink consumer: a long-poll pop, each result timed on arrival ---------------------------

    private void receiveOnce() throws IOException {
        Http1Connection.Response res = http.call("GET", "/api/v1/pop/queue/" + SINK
                + "?batch=1000&wait=true&autoAck=true&timeout=" + POP_TIMEOUT_MS, null, POP_TIMEOUT_MS + 30_000);
        long received = TimerLateness.nowMicros();
        if (res.status() == 204) {
            return;
        }
        for (JsonNode m : ok(res, "sink pop").path("messages")) {
            JsonNode d = m.path("data");
            ledger.emitted(d.path("key").asText(), d.path("windowStart").asLong(), d.path("count").asLong(), received);
            results.incrementAndGet();
        }
    }

    // ---- plumbing ------------------------------------------------------------------------------------

    private interface Step {
        void run() throws IOException;
    }

    private Thread loop(String name, Step step) {
        return Thread.ofPlatform().name(name).start(() -> {
            while (!stopping) {
                try {
                    step.run();
                } catch (IOException | RuntimeException e) {
                    fail(e);
                    sleepMs(100);
                }
            }
        });
    }

    private void cycle(String body) throws IOException {
        Http1Connection.Response res = http.call("POST", "/streams/v1/cycle", body.getBytes(StandardCharsets.UTF_8),
                60_000);
        if (res.status() != 200 || BrokerHttp.count(res.body(), SUCCESS) < 1) {
            throw new IOException("cycle answered " + res.status() + ": " + snippet(res.body()));
        }
    }

    private void fail(Exception e) {
        failures.incrementAndGet();
        firstError.compareAndSet(null, e.toString());
    }

    private static void sleepMs(long ms) {
        if (ms > 0) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static JsonNode ok(Http1Connection.Response res, String what) throws IOException {
        if (res.status() != 200) {
            throw new IOException(what + " answered " + res.status() + ": " + snippet(res.body()));
        }
        return BrokerHttp.JSON.readTree(res.body());
    }

    private static String snippet(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }
}
