package io.queen.broker.engine;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * In-process counters of this broker since it started, served by /metrics and /metrics/prometheus: every HTTP
 * request, push / pop / ack requests with the messages they carried, and the runs and failed runs
 * of each background cycle. Counters only grow; a collector that wants per-minute figures diffs
 * two {@link #snapshot()}s. Thread-safe and cheap on
 * the hot path ({@link LongAdder}); the two rates cover the last minute.
 */
public final class BrokerMetrics {

    /** One read of every counter. Reads are not atomic across counters, each is monotone. */
    public record Counters(long httpRequests,
                           long pushRequests, long pushMessages,
                           long popRequests, long popMessages, long popEmpty,
                           long ackRequests, long ackMessages, long ackSuccess, long ackFailed) {
        /** Messages moved by the data path: pushed + popped + acked (the /metrics "messages.total"). */
        public long messages() {
            return pushMessages + popMessages + ackMessages;
        }
    }

    private final LongSupplier clockMillis;
    private final long startedAtMillis;
    private final LongAdder httpRequests = new LongAdder();
    private final LongAdder pushRequests = new LongAdder();
    private final LongAdder pushMessages = new LongAdder();
    private final LongAdder popRequests = new LongAdder();
    private final LongAdder popMessages = new LongAdder();
    private final LongAdder popEmpty = new LongAdder();
    private final LongAdder ackRequests = new LongAdder();
    private final LongAdder ackMessages = new LongAdder();
    private final LongAdder ackSuccess = new LongAdder();
    private final LongAdder ackFailed = new LongAdder();
    private final Map<String, CycleCounters> cycles = new ConcurrentHashMap<>();
    private final RateWindow requestRate;
    private final RateWindow messageRate;
    private final SurfaceMetrics surfaces = new SurfaceMetrics();

    public BrokerMetrics() {
        this(() -> System.nanoTime() / 1_000_000L);
    }

    /** @param clockMillis a monotonic clock in milliseconds (injectable for tests) */
    public BrokerMetrics(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
        this.startedAtMillis = clockMillis.getAsLong();
        this.requestRate = new RateWindow(clockMillis);
        this.messageRate = new RateWindow(clockMillis);
    }

    /** One HTTP request reached the router (any route, any outcome). */
    public void requestServed() {
        httpRequests.increment();
        requestRate.add(1);
    }

    /** One push request answered with {@code messages} per-item results. */
    public void pushed(int messages) {
        pushRequests.increment();
        pushMessages.add(messages);
        messageRate.add(messages);
    }

    /** One pop request that delivered {@code messages} (0 = an empty pop). */
    public void popped(int messages) {
        popRequests.increment();
        if (messages == 0) {
            popEmpty.increment();
            return;
        }
        popMessages.add(messages);
        messageRate.add(messages);
    }

    /** One ack request (single or batch) with its per-item outcomes. */
    public void acked(List<AckService.Result> results) {
        ackRequests.increment();
        long ok = 0;
        for (AckService.Result r : results) {
            if (r.success()) {
                ok++;
            }
        }
        ackMessages.add(results.size());
        ackSuccess.add(ok);
        ackFailed.add(results.size() - ok);
        messageRate.add(results.size());
    }

    /** Runs of one background cycle on this broker: every run that executed, and those that failed. */
    public record CycleCount(long runs, long failures) {
    }

    /**
     * One run of the background cycle {@code cycle} (the job name, e.g. {@code stats-refresh})
     * ended; {@code failed} when it threw. Turns this replica did not win are not runs.
     */
    public void cycleRan(String cycle, boolean failed) {
        CycleCounters c = cycles.computeIfAbsent(cycle, k -> new CycleCounters());
        c.runs.increment();
        if (failed) {
            c.failures.increment();
        }
    }

    /** Makes the cycle's counters exist at 0 before its first run, so a scrape sees every cycle. */
    public void cycleRegistered(String cycle) {
        cycles.computeIfAbsent(cycle, k -> new CycleCounters());
    }

    /** Per cycle name, sorted by name. */
    public SortedMap<String, CycleCount> cycles() {
        SortedMap<String, CycleCount> out = new TreeMap<>();
        cycles.forEach((name, c) -> out.put(name, new CycleCount(c.runs.sum(), c.failures.sum())));
        return out;
    }

    private static final class CycleCounters {
        final LongAdder runs = new LongAdder();
        final LongAdder failures = new LongAdder();
    }

    public Counters snapshot() {
        return new Counters(httpRequests.sum(),
                pushRequests.sum(), pushMessages.sum(),
                popRequests.sum(), popMessages.sum(), popEmpty.sum(),
                ackRequests.sum(), ackMessages.sum(), ackSuccess.sum(), ackFailed.sum());
    }

    /** The KV, timer, sweeper and streams counters of this broker. */
    public SurfaceMetrics surfaces() {
        return surfaces;
    }

    public long uptimeSeconds() {
        return (clockMillis.getAsLong() - startedAtMillis) / 1000L;
    }

    /** HTTP requests per second over the last minute. */
    public double requestsPerSecond() {
        return requestRate.perSecond();
    }

    /** Pushed + popped + acked messages per second over the last minute. */
    public double messagesPerSecond() {
        return messageRate.perSecond();
    }
}
