package io.queen.e2e;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pushes small batches to one queue through the broker Service while brokers restart, as a careful
 * client would: a batch that failed in transport is sent again with the same transaction ids (the
 * broker deduplicates them), and a message counts as accepted once the broker answered queued,
 * duplicate or buffered (spooled to the broker's volume, replayed later). Afterwards
 * {@link #drainDelivered} pops everything; a lost message is an accepted id never delivered.
 * Bounded: stops by itself after {@code maxDuration} or {@code maxMessages}.
 */
final class TrafficLoop implements AutoCloseable {
    private static final int BATCH = 5;
    private static final Duration PAUSE = Duration.ofMillis(100);
    private static final Set<String> ACCEPTED = Set.of("queued", "duplicate", "buffered");

    private final BrokerApi broker;
    private final String queue;
    private final String runId;
    private final Instant deadline;
    private final long maxMessages;
    private final Set<String> accepted = new LinkedHashSet<>();
    private final List<String> refusals = new ArrayList<>();
    private final AtomicLong transportErrors = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    TrafficLoop(BrokerApi broker, String queue, Duration maxDuration, long maxMessages) {
        this.broker = broker;
        this.queue = queue;
        this.runId = Long.toHexString(System.nanoTime());
        this.deadline = Instant.now().plus(maxDuration);
        this.maxMessages = maxMessages;
        this.thread = Thread.ofPlatform().name("traffic-" + queue).daemon(true).start(this::run);
    }

    private void run() {
        long next = 0;
        List<String> batch = new ArrayList<>();
        while (running && Instant.now().isBefore(deadline) && next < maxMessages) {
            if (batch.isEmpty()) {
                for (int i = 0; i < BATCH; i++) {
                    batch.add(runId + "-" + next++);
                }
            }
            try {
                List<String> statuses = broker.push(null, queue, batch);
                List<String> retry = new ArrayList<>();
                for (int i = 0; i < batch.size(); i++) {
                    if (ACCEPTED.contains(statuses.get(i))) {
                        synchronized (accepted) {
                            accepted.add(batch.get(i));
                        }
                    } else {
                        synchronized (refusals) {
                            refusals.add(batch.get(i) + ": " + statuses.get(i));
                        }
                        retry.add(batch.get(i));
                    }
                }
                batch = retry;
            } catch (RuntimeException e) {
                // The broker behind the Service went away mid-request: send the same ids again.
                transportErrors.incrementAndGet();
            }
            try {
                Thread.sleep(PAUSE.toMillis());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    Set<String> accepted() {
        synchronized (accepted) {
            return Set.copyOf(accepted);
        }
    }

    List<String> refusals() {
        synchronized (refusals) {
            return List.copyOf(refusals);
        }
    }

    long transportErrors() {
        return transportErrors.get();
    }

    /** Pops (with autoAck) until the queue answers empty; returns every transaction id delivered so far plus these. */
    static Set<String> drainDelivered(BrokerApi broker, String queue, Set<String> deliveredSoFar) {
        Set<String> delivered = new LinkedHashSet<>(deliveredSoFar);
        for (int round = 0; round < 10_000; round++) {
            List<String> ids = broker.popAndAck(null, queue, 500);
            if (ids.isEmpty()) {
                break;
            }
            delivered.addAll(ids);
        }
        return delivered;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(30_000);
    }
}
