package io.queen.bench;

import java.util.concurrent.locks.LockSupport;

/**
 * Send slots of push requests: request k is due at start + k × interval (a fixed rate), or at once
 * when unthrottled. A late sender keeps its due time as the send time, so latency figures include
 * the time a request waited on the client (no coordinated omission).
 */
final class Pacer {
    private final long startNanos;
    private final long intervalNanos;

    /** {@code messagesPerSecond} 0 means unthrottled. */
    Pacer(double messagesPerSecond, int messagesPerRequest) {
        this.startNanos = System.nanoTime();
        this.intervalNanos = messagesPerSecond <= 0 ? 0 : Math.round(messagesPerRequest * 1e9 / messagesPerSecond);
    }

    /** Waits until request {@code k} is due and returns its send time in {@link System#nanoTime()} terms. */
    long awaitSlot(long k) {
        if (intervalNanos == 0) {
            return System.nanoTime();
        }
        long due = startNanos + k * intervalNanos;
        for (long wait; (wait = due - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(wait);
        }
        return due;
    }
}
