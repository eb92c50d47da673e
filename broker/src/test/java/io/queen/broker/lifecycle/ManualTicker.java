package io.queen.broker.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A {@link Ticker} that stands still until a test {@link #advance advances} it. Its monotonic
 * reading starts far from zero (code must only take differences) and its wall clock at a fixed
 * instant; both move together. A wait on it ends when it is signalled or when an advance reaches
 * its deadline, never by the passing of real time.
 */
public final class ManualTicker implements Ticker {
    /** Where the monotonic reading starts: any value is legal, so not a convenient one. */
    private static final long ORIGIN_NANOS = 7_000_000_000_000L;

    private record Waiting(Lock lock, Condition condition) {
    }

    private final Instant wallAtOrigin;
    private final Set<Waiting> waiting = Collections.newSetFromMap(new IdentityHashMap<>());
    private long nanos = ORIGIN_NANOS;
    private long waitsBegun;

    public ManualTicker() {
        this(Instant.parse("2030-01-01T00:00:00Z"));
    }

    public ManualTicker(Instant wallAtOrigin) {
        this.wallAtOrigin = wallAtOrigin;
    }

    @Override
    public synchronized long nanoTime() {
        return nanos;
    }

    @Override
    public synchronized Instant instant() {
        return wallAtOrigin.plusNanos(nanos - ORIGIN_NANOS);
    }

    /** Moves both readings forward and wakes every wait, so each one checks its deadline again. */
    public void advance(Duration by) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("a ticker does not go back: " + by);
        }
        List<Waiting> toWake;
        synchronized (this) {
            nanos += by.toNanos();
            toWake = List.copyOf(waiting);
        }
        // Outside the monitor: a waiter holds its lock while it registers here.
        for (Waiting w : toWake) {
            w.lock().lock();
            try {
                w.condition().signalAll();
            } finally {
                w.lock().unlock();
            }
        }
    }

    /** Waits in progress: registered, so the next advance wakes them. */
    public synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Waits ever begun. A waiter an advance woke short of its deadline begins another, so a test
     * sees it went back to waiting, rather than returning, once this count moved past its reading.
     */
    public synchronized long waitsBegun() {
        return waitsBegun;
    }

    @Override
    public void awaitUntil(Lock lock, Condition condition, long deadlineNanos) throws InterruptedException {
        Waiting me = new Waiting(lock, condition);
        synchronized (this) {
            if (nanos - deadlineNanos >= 0) {
                return;
            }
            // Registered while the caller holds its lock: an advance from now on signals it only
            // after the await below has released that lock, so no advance is missed.
            waiting.add(me);
            waitsBegun++;
        }
        try {
            condition.await();
        } finally {
            synchronized (this) {
                waiting.remove(me);
            }
        }
    }

    @Override
    public String toString() {
        return "ManualTicker at " + instant();
    }
}
