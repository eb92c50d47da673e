package io.queen.broker.engine.timers;

/**
 * The in-process hint from a committed schedule to this broker's sweeper: a timer is due sooner than
 * the sweeper may be sleeping (it sleeps up to 30 s with an empty table). Losing a hint costs latency,
 * never a timer: another broker's schedule is found within QUEEN_SWEEPER_MAX_SLEEP_MS.
 */
public final class TimerWake {
    private long version;

    /** Rings the sweeper; called after the schedule committed, never before. */
    public synchronized void ring() {
        version++;
        notifyAll();
    }

    public synchronized long version() {
        return version;
    }

    /** Waits up to {@code ms} or until a ring after {@code seen}; false when interrupted. */
    public synchronized boolean await(long seen, long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        try {
            while (version == seen) {
                long left = (end - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return true;
                }
                wait(left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
