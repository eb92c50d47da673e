package io.queen.broker.lifecycle;

/**
 * Doubling waits between retries of something that keeps failing (a lost database, a spool that
 * cannot drain), from {@code startMs} up to {@code capMs}, each spread by {@link Jitter}. Not
 * thread-safe: one loop owns one.
 */
public final class Backoff {
    private final long startMs;
    private final long capMs;
    private final double jitter;
    private long current;

    public Backoff(long startMs, long capMs, double jitter) {
        this.startMs = Math.max(1, startMs);
        this.capMs = Math.max(this.startMs, capMs);
        this.jitter = jitter;
    }

    /** The wait before the next attempt; the one after it is twice as long, up to the cap. */
    public long next() {
        current = current == 0 ? startMs : Math.min(current * 2, capMs);
        return Jitter.spread(current, jitter);
    }

    /** The unjittered wait {@link #next} last gave, 0 after a reset. */
    public long current() {
        return current;
    }

    /** Success: the next failure starts from the start again. */
    public void reset() {
        current = 0;
    }

    public boolean active() {
        return current > 0;
    }
}
