package io.queen.broker.lifecycle;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The time the engine and the jobs decide by: a monotonic reading for spans (idle rings, scan
 * staleness, long-poll timeouts, cadences), the wall clock for timestamps they write, and a wait
 * measured on the same clock. Production uses {@link #SYSTEM}; a test hands in a clock it moves
 * by hand, so "two minutes later" takes no two minutes and a timeout fires when the test says.
 */
public interface Ticker extends InstantSource {
    /** Nanoseconds from an arbitrary origin, only for differences, as {@link System#nanoTime}. */
    long nanoTime();

    /**
     * Waits on {@code condition} (of {@code lock}, which the caller holds) until it is signalled
     * or this ticker reaches {@code deadlineNanos} (a {@link #nanoTime} value). It may return
     * early for no reason, as {@link Condition#awaitNanos} may, so callers loop on their own state
     * and on {@code nanoTime() - deadlineNanos < 0}. The lock is there for a clock that is moved
     * by hand: moving it must wake the waits it ended.
     */
    void awaitUntil(Lock lock, Condition condition, long deadlineNanos) throws InterruptedException;

    /** The JVM's clocks and the condition's own timed wait. */
    Ticker SYSTEM = new Ticker() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public Instant instant() {
            return Instant.now();
        }

        @Override
        public void awaitUntil(Lock lock, Condition condition, long deadlineNanos) throws InterruptedException {
            condition.awaitNanos(deadlineNanos - System.nanoTime());
        }

        @Override
        public String toString() {
            return "Ticker.SYSTEM";
        }
    };
}
