package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Concurrent consumers in queue mode: long-poll pop of one batch, then one batch ack of all of it
 * (leaseId and partitionId per item). Delivery latency = pop receive time − the send time carried
 * in the payload. The phase ends once every message of the ledger was acked, or when nothing new
 * arrived for {@code stallSeconds}.
 */
final class ConsumePhase {
    private static final int POP_TIMEOUT_MS = 1000;

    /** {@code complete}: every message arrived; {@code elapsedNanos}: start to the last ack. */
    record Outcome(long delivered, long repeats, long ackFailures, boolean complete, long elapsedNanos,
                   String firstError, Latencies latencies, CallStats calls) {
        double messagesPerSecond() {
            return delivered / (elapsedNanos / 1e9);
        }
    }

    /** Where the consumers' time went: pops that returned messages, empty pops, and mean call times. */
    record CallStats(long pops, long emptyPops, long messages, long popNanos, long ackNanos) {
        String describe() {
            long full = pops - emptyPops;
            return String.format("%,d pops (%,d empty), %.1f msgs/pop, pop %.1f ms, ack %.1f ms", pops, emptyPops,
                    full == 0 ? 0.0 : messages / (double) full, pops == 0 ? 0.0 : popNanos / 1e6 / pops,
                    full == 0 ? 0.0 : ackNanos / 1e6 / full);
        }
    }

    private final BrokerHttp http;
    private final String queue;
    private final int batch;
    /** The pop's {@code partitions} parameter: how many partitions one pop may take messages from. */
    private int partitionsPerPop = 1;
    private final DeliveryLedger ledger;
    private final long target;
    private final Progress progress;
    private final long stallNanos;
    private final Latencies latencies = new Latencies();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong ackFailures = new AtomicLong();
    private final AtomicLong lastProgressNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong finishedNanos = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final AtomicLong pops = new AtomicLong();
    private final AtomicLong emptyPops = new AtomicLong();
    private final AtomicLong popped = new AtomicLong();
    private final AtomicLong popNanos = new AtomicLong();
    private final AtomicLong ackNanos = new AtomicLong();
    private final List<Thread> consumers = new ArrayList<>();
    private final long startNanos = System.nanoTime();

    private ConsumePhase(BrokerHttp http, String queue, int batch, DeliveryLedger ledger, long target,
                         Progress progress, int stallSeconds) {
        this.http = http;
        this.queue = queue;
        this.batch = batch;
        this.ledger = ledger;
        this.target = target;
        this.progress = progress;
        this.stallNanos = TimeUnit.SECONDS.toNanos(stallSeconds);
    }

    /** Starts {@code consumers} threads that drain the {@code target} messages of {@code ledger}. */
    static ConsumePhase start(BrokerHttp http, String queue, int consumers, int batch, DeliveryLedger ledger,
                              long target, Progress progress, int stallSeconds) {
        return start(http, queue, consumers, batch, 1, ledger, target, progress, stallSeconds);
    }

    /** Like the other, each pop taking from up to {@code partitionsPerPop} partitions. */
    static ConsumePhase start(BrokerHttp http, String queue, int consumers, int batch, int partitionsPerPop,
                              DeliveryLedger ledger, long target, Progress progress, int stallSeconds) {
        ConsumePhase phase = new ConsumePhase(http, queue, batch, ledger, target, progress, stallSeconds);
        phase.partitionsPerPop = partitionsPerPop;
        for (int i = 0; i < consumers; i++) {
            phase.consumers.add(Thread.ofPlatform().name("bench-consumer-" + i).start(phase::consume));
        }
        return phase;
    }

    Outcome await() throws InterruptedException {
        for (Thread t : consumers) {
            t.join();
        }
        long end = finishedNanos.get() != 0 ? finishedNanos.get() : lastProgressNanos.get();
        return new Outcome(ledger.unique(), ledger.repeats(), ackFailures.get(), acked.get() >= target,
                end - startNanos, firstError.get(), latencies,
                new CallStats(pops.get(), emptyPops.get(), popped.get(), popNanos.get(), ackNanos.get()));
    }

    private boolean running() {
        return acked.get() < target && System.nanoTime() - lastProgressNanos.get() < stallNanos
                && !Thread.currentThread().isInterrupted();
    }

    private void consume() {
        long[] micros = new long[batch];
        StringBuilder ack = new StringBuilder();
        while (running()) {
            try {
                long popStart = System.nanoTime();
                JsonNode res = http.pop(queue, batch, partitionsPerPop, POP_TIMEOUT_MS);
                long receivedAt = System.nanoTime();
                pops.incrementAndGet();
                popNanos.addAndGet(receivedAt - popStart);
                if (res == null) {
                    emptyPops.incrementAndGet();
                    continue;
                }
                JsonNode messages = res.path("messages");
                popped.addAndGet(messages.size());
                int fresh = readBatch(messages, receivedAt, micros, ack);
                latencies.addAll(micros, fresh);
                long ackStart = System.nanoTime();
                countAckFailures(http.ackBatch(ack.toString()));
                ackNanos.addAndGet(System.nanoTime() - ackStart);
                progress.add(fresh);
                lastProgressNanos.set(System.nanoTime());
                if (acked.addAndGet(fresh) >= target) {
                    finishedNanos.compareAndSet(0, System.nanoTime());
                }
            } catch (IOException e) {
                firstError.compareAndSet(null, e.getMessage());
                sleepQuietly();
            }
        }
    }

    /** Records the deliveries and builds the ack body; returns how many were first deliveries. */
    private int readBatch(JsonNode messages, long receivedAt, long[] micros, StringBuilder ack) {
        int fresh = 0;
        ack.setLength(0);
        ack.append("{\"acknowledgments\":[");
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            JsonNode data = m.path("data");
            if (ledger.record(data.path(Payloads.SEQ).asLong(-1)) && fresh < micros.length) {
                micros[fresh++] = (receivedAt - data.path(Payloads.SENT_AT).asLong()) / 1000;
            }
            if (i > 0) {
                ack.append(',');
            }
            ack.append("{\"transactionId\":\"").append(m.path("transactionId").asText())
               .append("\",\"partitionId\":\"").append(m.path("partitionId").asText())
               .append("\",\"leaseId\":\"").append(m.path("leaseId").asText())
               .append("\",\"status\":\"completed\"}");
        }
        ack.append("]}");
        return fresh;
    }

    private void countAckFailures(JsonNode results) {
        for (JsonNode r : results) {
            if (!r.path("success").asBoolean(false)) {
                ackFailures.incrementAndGet();
                firstError.compareAndSet(null, "ack failed: " + r.path("error").asText());
            }
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
