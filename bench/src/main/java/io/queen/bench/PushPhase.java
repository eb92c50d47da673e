package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Concurrent HTTP producers: request k carries {@code perRequest} messages for partition
 * {@code k % partitions}, so each request becomes exactly one segment in the broker.
 */
final class PushPhase {
    /**
     * What to push. Message sequence numbers run from {@code firstSeq}. Request k goes to partition
     * k % partitions, or with {@code spread} message m of the plan goes to partition m % partitions.
     */
    record Plan(String queue, int partitions, long requests, int perRequest, long firstSeq, int producers,
                boolean spread) {
        Plan(String queue, int partitions, long requests, int perRequest, long firstSeq, int producers) {
            this(queue, partitions, requests, perRequest, firstSeq, producers, false);
        }

        long messages() {
            return requests * perRequest;
        }
    }

    /** {@code notQueued}: items answered with another status than "queued", or lost to a failed request. */
    record Outcome(long messages, long notQueued, long elapsedNanos, String firstError, Latencies requests) {
        double messagesPerSecond() {
            return messages / (elapsedNanos / 1e9);
        }
    }

    private final BrokerHttp http;
    private final Plan plan;
    private final Payloads payloads;
    private final Pacer pacer;
    private final Progress progress;
    private final AtomicLong nextRequest = new AtomicLong();
    private final AtomicLong sentRequests = new AtomicLong();
    private final AtomicBoolean stop;
    private final AtomicLong notQueued = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    /** Time of each push request, send to answer. */
    private final Latencies requests = new Latencies();

    private PushPhase(BrokerHttp http, Plan plan, Payloads payloads, Pacer pacer, Progress progress,
                      AtomicBoolean stop) {
        this.stop = stop;
        this.http = http;
        this.plan = plan;
        this.payloads = payloads;
        this.pacer = pacer;
        this.progress = progress;
    }

    static Outcome run(BrokerHttp http, Plan plan, Payloads payloads, Pacer pacer, Progress progress)
            throws InterruptedException {
        return new PushPhase(http, plan, payloads, pacer, progress, new AtomicBoolean()).run();
    }

    /**
     * Like the other, but the producers also stop, each after its request in flight, once
     * {@code stop} is set: the plan's requests are then an upper bound, and the outcome counts the
     * messages of the requests sent.
     */
    static Outcome run(BrokerHttp http, Plan plan, Payloads payloads, Pacer pacer, Progress progress,
                       AtomicBoolean stop) throws InterruptedException {
        return new PushPhase(http, plan, payloads, pacer, progress, stop).run();
    }

    private Outcome run() throws InterruptedException {
        long start = System.nanoTime();
        List<Thread> producers = new ArrayList<>();
        for (int i = 0; i < plan.producers(); i++) {
            producers.add(Thread.ofPlatform().name("bench-producer-" + i).start(this::produce));
        }
        for (Thread t : producers) {
            t.join();
        }
        return new Outcome(sentRequests.get() * plan.perRequest(), notQueued.get(), System.nanoTime() - start, firstError.get(), requests);
    }

    private void produce() {
        StringBuilder body = new StringBuilder();
        for (long k; !stop.get() && (k = nextRequest.getAndIncrement()) < plan.requests(); ) {
            long sentAt = pacer.awaitSlot(k);
            body.setLength(0);
            appendRequest(body, k, sentAt);
            try {
                byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
                long sendNanos = System.nanoTime();
                JsonNode results = http.pushExpectingQueued(bytes, plan.perRequest());
                requests.add((System.nanoTime() - sendNanos) / 1000);
                if (results != null) { // some item was not queued
                    int queued = 0;
                    for (JsonNode r : results) {
                        if ("queued".equals(r.path("status").asText())) {
                            queued++;
                        } else {
                            firstError.compareAndSet(null, "push item status " + r.path("status").asText());
                        }
                    }
                    notQueued.addAndGet(plan.perRequest() - queued);
                }
            } catch (IOException e) {
                notQueued.addAndGet(plan.perRequest());
                firstError.compareAndSet(null, e.getMessage());
            }
            sentRequests.incrementAndGet();
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            progress.add(plan.perRequest());
        }
    }

    private void appendRequest(StringBuilder sb, long k, long sentAt) {
        String partition = Payloads.partitionName(k, plan.partitions());
        long seq = plan.firstSeq() + k * plan.perRequest();
        sb.append("{\"items\":[");
        for (int i = 0; i < plan.perRequest(); i++, seq++) {
            if (i > 0) {
                sb.append(',');
            }
            if (plan.spread()) {
                partition = Payloads.partitionName(k * plan.perRequest() + i, plan.partitions());
            }
            sb.append("{\"queue\":\"").append(plan.queue())
              .append("\",\"partition\":\"").append(partition)
              .append("\",\"transactionId\":\"").append(Payloads.transactionId(seq))
              .append("\",\"payload\":");
            payloads.append(sb, seq, sentAt);
            sb.append('}');
        }
        sb.append("]}");
    }
}
