package io.queen.broker.warmup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.lifecycle.BackgroundThread;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * One shape of warm-up traffic: {@link Shape#messages()} messages pushed with transactionIds in
 * requests of {@link Shape#pushBatch()} items over {@link Shape#partitions()} partitions by two
 * producers, while two consumers long-poll pops of up to 100 (from up to 10 partitions a pop) and
 * batch-ack what they get. It ends when the producers are done and the consumers have everything,
 * at the deadline, or at the client's first failure.
 */
final class WarmupPhase {
    private static final Logger LOG = Logger.getLogger(WarmupPhase.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int PRODUCERS = 2;
    /** Two: one consumer finished its pops and acks seconds after the producers (bench --cold). */
    private static final int CONSUMERS = 2;
    private static final int POP_BATCH = 100;
    private static final int MAX_POP_PARTITIONS = 10;
    private static final int PAYLOAD_PAD = 200;
    private static final long PROGRESS_NANOS = 2_000_000_000L;
    /** Consumers give up this long after the deadline: what is left goes with the queue. */
    private static final long CONSUMER_GRACE_NANOS = 5_000_000_000L;

    /** What a phase sends; {@code name} goes into its log lines and transactionIds. */
    record Shape(String name, int pushBatch, int partitions, long messages) {
    }

    private final Shape shape;
    private final WarmupClient client;
    private final String queue;
    private final String run;
    private final AtomicBoolean stop;
    private final AtomicLong nextRequest = new AtomicLong();
    private final AtomicLong pushed = new AtomicLong();
    private final AtomicLong consumed = new AtomicLong();
    /** Producers still sending: a push in flight is counted in {@link #pushed} only when it returns. */
    private final AtomicInteger producing = new AtomicInteger(PRODUCERS);

    WarmupPhase(Shape shape, WarmupClient client, String queue, String run, AtomicBoolean stop) {
        this.shape = shape;
        this.client = client;
        this.queue = queue;
        this.run = run;
        this.stop = stop;
    }

    long pushed() {
        return pushed.get();
    }

    long consumed() {
        return consumed.get();
    }

    /** Runs the phase to its end (see the class comment), logging progress every 2 s. */
    void run(long deadline) throws InterruptedException {
        long start = System.nanoTime();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < PRODUCERS; i++) {
            workers.add(BackgroundThread.start("queen-warmup-push-" + i, () -> produce(deadline)));
        }
        for (int i = 0; i < CONSUMERS; i++) {
            workers.add(BackgroundThread.start("queen-warmup-consume-" + i, () -> consume(deadline)));
        }
        long nextReport = start + PROGRESS_NANOS;
        for (Thread t : workers) {
            while (t.isAlive()) {
                t.join(200);
                if (System.nanoTime() >= nextReport) {
                    nextReport += PROGRESS_NANOS;
                    LOG.info(String.format("warm-up %s on queue %s: %,d of %,d messages pushed, %,d consumed, %.1f s",
                            shape.name(), queue, pushed.get(), shape.messages(), consumed.get(),
                            (System.nanoTime() - start) / 1e9));
                }
            }
        }
    }

    private boolean going(long deadline) {
        return !stop.get() && !client.failed() && System.nanoTime() < deadline;
    }

    private void produce(long deadline) {
        try {
            produceUntilDone(deadline);
        } finally {
            producing.decrementAndGet();
        }
    }

    private void produceUntilDone(long deadline) {
        StringBuilder body = new StringBuilder();
        String pad = "x".repeat(PAYLOAD_PAD);
        int batch = shape.pushBatch();
        long requests = (shape.messages() + batch - 1) / batch;
        for (long k; going(deadline) && (k = nextRequest.getAndIncrement()) < requests; ) {
            body.setLength(0);
            body.append("{\"items\":[");
            for (int i = 0; i < batch; i++) {
                if (i > 0) {
                    body.append(',');
                }
                body.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"p").append(k % shape.partitions())
                    .append("\",\"transactionId\":\"warmup-").append(run).append('-').append(shape.name()).append('-')
                    .append(k).append('-').append(i)
                    .append("\",\"payload\":{\"n\":").append(i).append(",\"pad\":\"").append(pad).append("\"}}");
            }
            body.append("]}");
            String answer = client.send("POST", "/api/v1/push", body.toString(), 201);
            if (answer != null && answer.contains("\"buffered\"")) {
                // Spooled, not stored: the database is unavailable (or in maintenance), and a replay
                // after the end would bring back the queue deleted meanwhile.
                client.fail("pushes are spooled, the database is unavailable");
            } else if (answer != null) {
                pushed.addAndGet(batch);
            }
        }
    }

    private void consume(long deadline) {
        StringBuilder ack = new StringBuilder();
        String pop = "/api/v1/pop/queue/" + queue + "?batch=" + POP_BATCH + "&partitions="
                + Math.min(shape.partitions(), MAX_POP_PARTITIONS) + "&wait=true&timeout=500";
        // Until the producers stopped (by count, deadline or failure) and everything pushed is consumed.
        // `producing` is read first: once it is 0, every push's count is in `pushed`. Judging by the
        // requests taken instead missed the last push while it was in flight (1,990 of 2,000 consumed).
        while (!client.failed() && !stop.get() && (producing.get() > 0 || consumed.get() < pushed.get())) {
            if (System.nanoTime() > deadline + CONSUMER_GRACE_NANOS) {
                return; // checked before the pop: empty pops (204) would skip a check at the end
            }
            String res = client.send("GET", pop, null, 200);
            if (res == null) {
                continue; // 204: nothing yet, or a failure that stops the loop
            }
            JsonNode messages;
            try {
                messages = JSON.readTree(res).path("messages");
            } catch (IOException e) {
                client.fail("unreadable pop answer: " + e.getMessage());
                return;
            }
            ack.setLength(0);
            ack.append("{\"acknowledgments\":[");
            for (int i = 0; i < messages.size(); i++) {
                JsonNode m = messages.get(i);
                ack.append(i > 0 ? "," : "").append("{\"transactionId\":\"").append(m.path("transactionId").asText())
                   .append("\",\"partitionId\":\"").append(m.path("partitionId").asText())
                   .append("\",\"leaseId\":\"").append(m.path("leaseId").asText())
                   .append("\",\"status\":\"completed\"}");
            }
            ack.append("]}");
            if (messages.size() > 0 && client.send("POST", "/api/v1/ack/batch", ack.toString(), 200) != null) {
                consumed.addAndGet(messages.size());
            }
        }
    }
}
