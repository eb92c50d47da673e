package io.queen.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Closed-loop clients for a fixed time: each of {@code clients} threads makes calls back to back
 * for {@code warmupSeconds} (unmeasured: the broker's JIT and PostgreSQL's caches settle) and then
 * {@code seconds} (measured). Only calls begun inside the measured window count, and the window
 * ends at the last of them to finish, so a call cut off by the deadline is neither lost nor half
 * counted. A line of progress every few seconds.
 */
final class TimedClients {
    private static final long PROGRESS_SECONDS = 3;

    /** One client's connection state and its call. */
    interface Client extends AutoCloseable {
        /**
         * One call; returns how many operations it completed (0: it found nothing to do, and is not
         * counted as a call), or -1 when there is nothing left to do (the client stops).
         * {@code measured}: the call is inside the measured window.
         */
        int call(long seq, boolean measured) throws Exception;

        @Override
        default void close() throws Exception {
        }
    }

    interface ClientFactory {
        Client open(int index) throws Exception;
    }

    /**
     * Measured figures: calls and operations that completed, failed calls, the window's length, the
     * time of each call and the first error. {@code drained}: some client ran out of work.
     */
    record Outcome(long calls, long ops, long failures, double seconds, Latencies latencies, String firstError,
                   boolean drained) {
        double callsPerSecond() {
            return seconds > 0 ? calls / seconds : 0;
        }

        double opsPerSecond() {
            return seconds > 0 ? ops / seconds : 0;
        }
    }

    private TimedClients() {
    }

    static Outcome run(String label, String unit, int clients, int warmupSeconds, int seconds, ClientFactory factory)
            throws InterruptedException {
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupSeconds);
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        AtomicLong calls = new AtomicLong();
        AtomicLong ops = new AtomicLong();
        AtomicLong allOps = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong lastDone = new AtomicLong(measureFrom);
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicBoolean drained = new AtomicBoolean();
        Latencies latencies = new Latencies();
        AtomicLong seq = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int index = c;
            threads.add(Thread.ofPlatform().name("bench-client-" + c).start(() -> {
                try (Client client = factory.open(index)) {
                    for (long now; (now = System.nanoTime()) < end && !Thread.currentThread().isInterrupted(); ) {
                        boolean measured = now >= measureFrom;
                        int done;
                        try {
                            done = client.call(seq.getAndIncrement(), measured);
                        } catch (Exception e) {
                            if (measured) {
                                failures.incrementAndGet();
                            }
                            firstError.compareAndSet(null, String.valueOf(e.getMessage()));
                            Thread.sleep(50);
                            continue;
                        }
                        if (done < 0) {
                            drained.set(true);
                            return;
                        }
                        long finished = System.nanoTime();
                        allOps.addAndGet(done);
                        if (measured && done > 0) {
                            calls.incrementAndGet();
                            ops.addAndGet(done);
                            latencies.add((finished - now) / 1000);
                            lastDone.accumulateAndGet(finished, Math::max);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    firstError.compareAndSet(null, "client " + index + ": " + e.getMessage());
                }
            }));
        }
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-progress");
            t.setDaemon(true);
            return t;
        });
        long[] last = {0};
        ticker.scheduleAtFixedRate(() -> {
            long now = allOps.get();
            System.out.printf("  %-30s %-8s %,12d %s  (%,.0f %s/s)%n", label,
                    System.nanoTime() < measureFrom ? "warm-up" : "measured", now, unit,
                    (now - last[0]) / (double) PROGRESS_SECONDS, unit);
            System.out.flush();
            last[0] = now;
        }, PROGRESS_SECONDS, PROGRESS_SECONDS, TimeUnit.SECONDS);
        try {
            for (Thread t : threads) {
                t.join();
            }
        } finally {
            ticker.shutdownNow();
        }
        return new Outcome(calls.get(), ops.get(), failures.get(), (lastDone.get() - measureFrom) / 1e9, latencies,
                firstError.get(), drained.get());
    }
}
