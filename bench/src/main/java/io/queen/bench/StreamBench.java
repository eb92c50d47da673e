package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code bin/bench --streams}: one streaming query over a source queue of {@code --stream-partitions}
 * partitions, preloaded with {@code --stream-messages}, run by {@code --clients} runners as the JS
 * client's Stream runner drives the broker: a pop of up to {@code --stream-batch} with the query's
 * consumer group, then one {@code POST /streams/v1/cycle} that upserts {@code --stream-state-keys}
 * state keys (a running aggregate), pushes one sink message per source message (a map stage) and
 * acks the popped batch, all in one transaction. The cycle's time is timed alone and with its pop.
 */
final class StreamBench {
    static final String SOURCE = "bench-stream-src";
    static final String SINK = "bench-stream-sink";
    static final String QUERY = "bench.stream";
    static final String GROUP = "streams." + QUERY;
    private static final int PAYLOAD_BYTES = 256;
    private static final int POP_TIMEOUT_MS = 1000;
    private static final byte[] SUCCESS = "\"success\":true".getBytes(StandardCharsets.US_ASCII);

    private StreamBench() {
    }

    /** True when no cycle failed; a source that ran dry shortens the window and is said, not failed. */
    static boolean run(SurfaceOptions o, BrokerHttp http) throws IOException, InterruptedException {
        String queryId = http.postJson("/streams/v1/queries", "{\"name\":\"" + QUERY + "\",\"source_queue\":\"" + SOURCE
                + "\",\"sink_queue\":\"" + SINK + "\",\"config_hash\":\"bench-1\"}", 200).path("query_id").asText();
        long requests = (o.streamMessages() + o.streamBatch() - 1) / o.streamBatch();
        long messages = requests * o.streamBatch();
        System.out.printf("streams: query %s over %s (%d partitions) into %s; %,d source messages of about %d B; "
                        + "%d runners, pop batch %d, %d state keys a cycle, one sink message per source message; "
                        + "%d s warm-up + %d s measured%n", QUERY, SOURCE, o.streamPartitions(), SINK, messages,
                PAYLOAD_BYTES, o.clients(), o.streamBatch(), o.streamStateKeys(), o.warmupSeconds(), o.seconds());
        PushPhase.Outcome preload;
        try (Progress progress = new Progress("source preload", messages)) {
            preload = PushPhase.run(http, new PushPhase.Plan(SOURCE, o.streamPartitions(), requests, o.streamBatch(),
                    0, o.clients()), new Payloads(PAYLOAD_BYTES), new Pacer(0, o.streamBatch()), progress);
        }
        if (preload.notQueued() > 0) {
            throw new IOException(preload.notQueued() + " source messages not queued: " + preload.firstError());
        }
        System.out.printf("  preloaded %,d messages in %.1f s (not measured)%n", messages, preload.elapsedNanos() / 1e9);

        Latencies cycles = new Latencies();
        Latencies pops = new Latencies();
        AtomicLong consumed = new AtomicLong();
        TimedClients.Outcome run = TimedClients.run("stream cycles", "msgs", o.clients(), o.warmupSeconds(),
                o.seconds(), c -> (seq, measured) -> {
                    long popStart = System.nanoTime();
                    Http1Connection.Response res = http.call("GET", "/api/v1/pop/queue/" + SOURCE + "?batch="
                            + o.streamBatch() + "&consumerGroup=" + GROUP + "&subscriptionMode=all&wait=true&timeout="
                            + POP_TIMEOUT_MS, null, POP_TIMEOUT_MS + 30_000);
                    long cycleStart = System.nanoTime();
                    if (res.status() == 204) {
                        return consumed.get() >= messages ? -1 : 0;
                    }
                    JsonNode batch = ok(res, "pop").path("messages");
                    String body = StreamCycles.body(queryId, GROUP, SINK, batch, o.streamStateKeys(), seq);
                    Http1Connection.Response cycle = http.call("POST", "/streams/v1/cycle",
                            body.getBytes(StandardCharsets.UTF_8), 60_000);
                    long done = System.nanoTime();
                    if (cycle.status() != 200 || BrokerHttp.count(cycle.body(), SUCCESS) < 1) {
                        throw new IOException("cycle answered " + cycle.status() + ": " + snippet(cycle.body()));
                    }
                    consumed.addAndGet(batch.size());
                    if (measured) {
                        pops.add((cycleStart - popStart) / 1000);
                        cycles.add((done - cycleStart) / 1000);
                    }
                    return batch.size();
                });

        System.out.printf("%n== streams: %d runners, %d source partitions, pop batch %d, %d state keys a cycle ==%n",
                o.clients(), o.streamPartitions(), o.streamBatch(), o.streamStateKeys());
        FigureTable table = new FigureTable("", "figure");
        table.row("cycles/s", FigureTable.rate(run.callsPerSecond()));
        table.row("messages/s through the pipeline", FigureTable.rate(run.opsPerSecond()));
        table.row("messages a cycle (mean)", run.calls() == 0 ? "-" : String.format("%.1f", run.ops() / (double) run.calls()));
        table.row("cycle p50 / p99 / max ms", FigureTable.ms(cycles.percentileMs(50)) + " / "
                + FigureTable.ms(cycles.percentileMs(99)) + " / " + FigureTable.ms(cycles.percentileMs(100)));
        table.row("pop p50 / p99 ms", FigureTable.ms(pops.percentileMs(50)) + " / " + FigureTable.ms(pops.percentileMs(99)));
        table.row("pop + cycle p50 / p99 ms", FigureTable.ms(run.latencies().percentileMs(50)) + " / "
                + FigureTable.ms(run.latencies().percentileMs(99)));
        table.row("failed cycles", Long.toString(run.failures()));
        System.out.print(table.render());
        if (run.drained()) {
            System.out.println("the source ran dry before the end: the figures cover " + String.format("%.1f", run.seconds())
                    + " s; raise --stream-messages");
        }
        if (run.firstError() != null) {
            System.out.println("first error: " + run.firstError());
        }
        return run.failures() == 0;
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
