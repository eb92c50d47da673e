package io.queen.broker.engine;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Events per second over the last {@link #SECONDS} whole seconds: a ring of one-second buckets,
 * each stamped with the second it counts so a slot left over from a previous lap reads as zero.
 * The second in progress is not part of the rate (it would under-report until it ends). A lock
 * rather than {@code synchronized} so a virtual thread never pins its carrier here.
 */
final class RateWindow {
    static final int SECONDS = 60;

    private final LongSupplier clockMillis;
    private final long[] stamp = new long[SECONDS];
    private final long[] count = new long[SECONDS];
    private final ReentrantLock lock = new ReentrantLock();

    RateWindow(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
        java.util.Arrays.fill(stamp, Long.MIN_VALUE);
    }

    void add(long events) {
        if (events <= 0) {
            return;
        }
        long second = Math.floorDiv(clockMillis.getAsLong(), 1000L);
        int slot = (int) Math.floorMod(second, (long) SECONDS);
        lock.lock();
        try {
            if (stamp[slot] != second) {
                stamp[slot] = second;
                count[slot] = 0;
            }
            count[slot] += events;
        } finally {
            lock.unlock();
        }
    }

    /** Mean events per second over the {@link #SECONDS} seconds that ended before the current one. */
    double perSecond() {
        long now = Math.floorDiv(clockMillis.getAsLong(), 1000L);
        long total = 0;
        lock.lock();
        try {
            for (int i = 0; i < SECONDS; i++) {
                long age = now - stamp[i];
                if (age >= 1 && age <= SECONDS) {
                    total += count[i];
                }
            }
        } finally {
            lock.unlock();
        }
        return Math.round(total * 100.0 / SECONDS) / 100.0;
    }
}
