package io.queen.bench;

import java.util.Map;
import java.util.TreeMap;

/**
 * Tumbling windows of {@code windowMs} over event time in epoch milliseconds: an event at {@code t}
 * falls in the window {@code [start, start + windowMs)} with {@code start = floor(t / windowMs) *
 * windowMs}. A window's state row is keyed {@code win:<start>}; its value carries the numeric
 * {@code windowEnd} the broker's ripe filter ({@code ripe_at_or_before}) compares.
 */
record TumblingWindows(long windowMs) {
    static final String KEY_PREFIX = "win:";

    TumblingWindows {
        if (windowMs <= 0) {
            throw new IllegalArgumentException("a window must be longer than 0 ms, got " + windowMs);
        }
    }

    long start(long eventMs) {
        return Math.floorDiv(eventMs, windowMs) * windowMs;
    }

    long end(long start) {
        return start + windowMs;
    }

    static String key(long start) {
        return KEY_PREFIX + start;
    }

    /** The window start a state key names; IllegalArgumentException for a key of another shape. */
    static long startOf(String key) {
        if (!key.startsWith(KEY_PREFIX)) {
            throw new IllegalArgumentException("not a window key: " + key);
        }
        return Long.parseLong(key.substring(KEY_PREFIX.length()));
    }

    /** Events per window start, in window order. */
    Map<Long, Long> counts(long... eventMs) {
        Map<Long, Long> out = new TreeMap<>();
        for (long t : eventMs) {
            out.merge(start(t), 1L, Long::sum);
        }
        return out;
    }
}
