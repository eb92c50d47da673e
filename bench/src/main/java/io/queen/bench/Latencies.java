package io.queen.bench;

import java.util.Arrays;

/** Delivery latencies in microseconds, recorded from many threads; percentiles by sorting at the end. */
final class Latencies {
    private long[] values = new long[1024];
    private int size;

    synchronized void add(long micros) {
        addAll(new long[] {micros}, 1);
    }

    synchronized void addAll(long[] micros, int count) {
        if (size + count > values.length) {
            values = Arrays.copyOf(values, Math.max(values.length * 2, size + count));
        }
        System.arraycopy(micros, 0, values, size, count);
        size += count;
    }

    synchronized int count() {
        return size;
    }

    /** The nearest-rank percentile in milliseconds, {@code p} in (0, 100]; NaN when empty. */
    synchronized double percentileMs(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * size);
        return sorted[Math.max(0, Math.min(size, rank) - 1)] / 1000.0;
    }
}
