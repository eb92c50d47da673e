package io.queen.bench;

import java.util.List;

/**
 * The memory figures of a soak: the broker's RSS read each minute, the minute growth is measured
 * from (the 10th, or the 1st in a run of 10 minutes or less, the JVM's start-up and warm-up being
 * behind it by then), the growth to the end, the largest RSS from that minute on, and the share of
 * its one-second samples above the target (the JIT compiling a hot method holds 20-35 MB of native
 * arenas for a second or two, so the largest sample alone does not say how often that is).
 */
final class SoakFigures {
    static final int SETTLED_MINUTE = 10;

    private SoakFigures() {
    }

    /** The minute (1-based) growth is measured from in a run of {@code minutes}. */
    static int baseMinute(int minutes) {
        return minutes > SETTLED_MINUTE ? SETTLED_MINUTE : 1;
    }

    /** Growth from {@code from} to {@code to} in percent of {@code from}. */
    static double growthPercent(double from, double to) {
        return (to - from) / from * 100;
    }

    /** Growth from the base minute to the last of {@code rssByMinute} (minute m at index m - 1), in %. */
    static double growthPercent(List<Double> rssByMinute) {
        int base = baseMinute(rssByMinute.size());
        return growthPercent(rssByMinute.get(base - 1), rssByMinute.getLast());
    }

    /** The largest RSS from the base minute on: the steady state's. */
    static double steadyMax(List<Double> rssByMinute) {
        int base = baseMinute(rssByMinute.size());
        return rssByMinute.subList(base - 1, rssByMinute.size()).stream().mapToDouble(Double::doubleValue).max()
                .orElse(Double.NaN);
    }

    /** Percent of the one-second samples from the base minute on above the target; {@code overByMinute} counts them a minute. */
    static double steadySharePercentOver(List<Integer> overByMinute, List<Integer> samplesByMinute) {
        long over = sumFromBase(overByMinute);
        long samples = sumFromBase(samplesByMinute);
        return samples == 0 ? Double.NaN : over * 100.0 / samples;
    }

    private static long sumFromBase(List<Integer> byMinute) {
        return byMinute.subList(baseMinute(byMinute.size()) - 1, byMinute.size()).stream()
                .mapToLong(Integer::longValue).sum();
    }
}
