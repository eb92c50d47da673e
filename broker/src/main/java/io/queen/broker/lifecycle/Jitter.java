package io.queen.broker.lifecycle;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Random spread of the broker's periods and backoffs, so replicas booted together do not poll or
 * reconnect in lock-step: one rule, a uniform draw within a fraction either side.
 */
public final class Jitter {
    private Jitter() {
    }

    /** {@code ms} moved by up to {@code fraction} of itself either way, never below 1. */
    public static long spread(long ms, double fraction) {
        long width = (long) (ms * fraction);
        if (width <= 0) {
            return Math.max(1, ms);
        }
        return Math.max(1, ms - width + ThreadLocalRandom.current().nextLong(2 * width + 1));
    }
}
