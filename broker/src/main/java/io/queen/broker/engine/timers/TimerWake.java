package io.queen.broker.engine.timers;

import io.queen.broker.lifecycle.Ticker;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-process hint from a committed schedule to this broker's sweeper: a timer is due sooner than
 * the sweeper may be sleeping (it sleeps up to 30 s with an empty table). Losing a hint costs latency,
 * never a timer: another broker's schedule is found within QUEEN_SWEEPER_MAX_SLEEP_MS. The sleep is
 * measured on the {@link Ticker} handed in, so a test ends it by advancing a clock.
 */
public final class TimerWake {
    private final Ticker ticker;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition rung = lock.newCondition();
    private long version;

    public TimerWake(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Rings the sweeper; called after the schedule committed, never before. */
    public void ring() {
        lock.lock();
        try {
            version++;
            rung.signalAll();
        } finally {
            lock.unlock();
        }
    }

    public long version() {
        lock.lock();
        try {
            return version;
        } finally {
            lock.unlock();
        }
    }

    /** Waits up to {@code ms} or until a ring after {@code seen}; false when interrupted. */
    public boolean await(long seen, long ms) {
        lock.lock();
        try {
            long deadline = ticker.nanoTime() + ms * 1_000_000L;
            while (version == seen && ticker.nanoTime() - deadline < 0) {
                ticker.awaitUntil(lock, rung, deadline);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }
}
