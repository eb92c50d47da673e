package io.queen.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * Watches the host while a phase runs: one platform thread asks to sleep {@value #TICK_MS} ms over
 * and over and records how late it wakes. A late wake-up is a stall nobody in the pipeline could
 * avoid (no CPU free to run a woken thread: a kernel thread hogging one, this JVM's own GC pause).
 * On a 2-core VM these stalls, not the broker, set the tail of delivery latency (bench/README.md),
 * so the latency run prints them beside its percentiles.
 */
final class HostStalls implements AutoCloseable {
    /** A wake-up at least this late counts as a stall. */
    static final long STALL_MS = 5;
    private static final long TICK_MS = 1;

    /** {@code count} stalls of at least {@value #STALL_MS} ms, {@code stalledNanos} lost to them in {@code elapsedNanos}. */
    record Outcome(long count, long longestNanos, long stalledNanos, long elapsedNanos) {
        String describe() {
            return String.format("host stalls (a %d ms sleep woken %d ms or more late): %,d, longest %.1f ms, "
                    + "%.1f%% of the time", TICK_MS, STALL_MS, count, longestNanos / 1e6,
                    elapsedNanos == 0 ? 0.0 : 100.0 * stalledNanos / elapsedNanos);
        }
    }

    private final Thread watcher;
    private final LongConsumer sleep;
    private final long start = System.nanoTime();
    private volatile boolean stop;
    // Written by the watcher only, read after join().
    private long count;
    private long longest;
    private long stalled;
    private long end;

    private HostStalls(LongConsumer sleep) {
        this.sleep = sleep;
        watcher = Thread.ofPlatform().daemon().name("bench-host-stalls").unstarted(this::watch);
        watcher.setPriority(Thread.MAX_PRIORITY);
    }

    static HostStalls start() {
        return start(LockSupport::parkNanos);
    }

    /** Watches with {@code sleep} (nanoseconds) in place of a real sleep: tests make it oversleep. */
    static HostStalls start(LongConsumer sleep) {
        HostStalls s = new HostStalls(sleep);
        s.watcher.start();
        return s;
    }

    private void watch() {
        long tick = TimeUnit.MILLISECONDS.toNanos(TICK_MS);
        long threshold = TimeUnit.MILLISECONDS.toNanos(STALL_MS);
        while (!stop) {
            long before = System.nanoTime();
            sleep.accept(tick);
            long late = System.nanoTime() - before - tick;
            if (late >= threshold) {
                count++;
                stalled += late;
                longest = Math.max(longest, late);
            }
        }
        end = System.nanoTime();
    }

    /** Stops watching and returns what was seen. */
    Outcome finish() throws InterruptedException {
        stop = true;
        watcher.join();
        return new Outcome(count, longest, stalled, end - start);
    }

    @Override
    public void close() {
        stop = true;
    }
}
