package io.queen.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The push curve of a cold broker: the number of messages pushed (answered) at sampled moments,
 * in nanoseconds since the push began, and the figures read from it. Between two samples the count
 * is taken to grow linearly; before the first it grows from (0, 0).
 */
final class ColdCurve {
    private static final long SECOND = 1_000_000_000L;

    record Point(long nanos, long count) {
    }

    private final List<Point> points = new ArrayList<>();

    /** Adds a sample; samples come in time order. */
    synchronized void add(long nanos, long count) {
        if (!points.isEmpty() && nanos < points.getLast().nanos()) {
            throw new IllegalArgumentException("samples must come in time order");
        }
        points.add(new Point(nanos, count));
    }

    /** The time of the latest sample, 0 before any. */
    synchronized long lastNanos() {
        return points.isEmpty() ? 0 : points.getLast().nanos();
    }

    /** The count of the latest sample, 0 before any. */
    synchronized long lastCount() {
        return points.isEmpty() ? 0 : points.getLast().count();
    }

    /** The count at {@code nanos}, interpolated; the last count after the last sample. */
    synchronized double countAt(long nanos) {
        long t0 = 0;
        long c0 = 0;
        for (Point p : points) {
            if (p.nanos() >= nanos) {
                return p.nanos() == t0 ? p.count() : c0 + (p.count() - c0) * (double) (nanos - t0) / (p.nanos() - t0);
            }
            t0 = p.nanos();
            c0 = p.count();
        }
        return c0;
    }

    /** Messages a second between {@code fromNanos} and {@code toNanos}. */
    double rate(long fromNanos, long toNanos) {
        return (countAt(toNanos) - countAt(fromNanos)) / ((toNanos - fromNanos) / 1e9);
    }

    /** The rate of each whole second 1..{@code seconds} (second s runs from s-1 to s); NaN past the last sample. */
    double[] perSecond(int seconds) {
        double[] out = new double[seconds];
        for (int s = 1; s <= seconds; s++) {
            out[s - 1] = s * SECOND > lastNanos() ? Double.NaN : rate((s - 1) * SECOND, s * SECOND);
        }
        return out;
    }

    /** When the count first reached {@code count}, interpolated; -1 when it has not. */
    synchronized long nanosToCount(long count) {
        long t0 = 0;
        long c0 = 0;
        for (Point p : points) {
            if (p.count() >= count) {
                return p.count() == c0 ? p.nanos() : t0 + Math.round((p.nanos() - t0) * (double) (count - c0) / (p.count() - c0));
            }
            t0 = p.nanos();
            c0 = p.count();
        }
        return -1;
    }

    /** Messages a second over the first {@code count} messages; NaN when they were not all pushed. */
    double rateOfFirst(long count) {
        long t = nanosToCount(count);
        return t <= 0 ? Double.NaN : count / (t / 1e9);
    }

    /**
     * The first sample time t (at least {@code windowNanos} in) at which the rate over the window
     * ending at t reached {@code rate}; -1 when it never did.
     */
    long firstNanosAtRate(double rate, long windowNanos) {
        List<Point> copy;
        synchronized (this) {
            copy = List.copyOf(points);
        }
        for (Point p : copy) {
            if (p.nanos() >= windowNanos && rate(p.nanos() - windowNanos, p.nanos()) >= rate) {
                return p.nanos();
            }
        }
        return -1;
    }

    /**
     * Whether the push rate has stopped rising at {@code nowNanos}: at least {@code minNanos} in,
     * and no rolling 5-s rate (taken each whole second) of the last {@code lookbackNanos} was more
     * than {@code rise} (a fraction) above the best one before them.
     */
    boolean steady(long nowNanos, long minNanos, long lookbackNanos, double rise) {
        if (nowNanos < minNanos || nowNanos - lookbackNanos < 5 * SECOND) {
            return false;
        }
        double before = 0;
        double recent = 0;
        for (long t = 5 * SECOND; t <= nowNanos; t += SECOND) {
            double r = rate(t - 5 * SECOND, t);
            if (t <= nowNanos - lookbackNanos) {
                before = Math.max(before, r);
            } else {
                recent = Math.max(recent, r);
            }
        }
        return before > 0 && recent <= before * (1 + rise);
    }

    /** The median of {@code values} (the mean of the middle two for an even count); NaN for none. */
    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        if (n == 0) {
            return Double.NaN;
        }
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
