package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ColdCurveTest {
    private static final long S = 1_000_000_000L;

    /** A push that ramps 1,000 msg/s faster each second up to 10,000, then holds, sampled each 100 ms. */
    private static ColdCurve ramp(int seconds) {
        ColdCurve c = new ColdCurve();
        double count = 0;
        for (long t = 100_000_000L; t <= seconds * S; t += 100_000_000L) {
            long second = (t - 1) / S + 1; // the second this 100 ms belongs to, 1-based
            count += Math.min(second * 1000, 10_000) / 10.0;
            c.add(t, Math.round(count));
        }
        return c;
    }

    @Test
    void countsBetweenSamplesAreInterpolatedFromZeroAtTheStart() {
        ColdCurve c = new ColdCurve();
        c.add(S, 1000);
        c.add(3 * S, 5000);
        assertEquals(500, c.countAt(S / 2), 1e-9);
        assertEquals(3000, c.countAt(2 * S), 1e-9);
        assertEquals(5000, c.countAt(10 * S), 1e-9);
        assertEquals(2000, c.rate(S, 3 * S), 1e-9);
        assertThrows(IllegalArgumentException.class, () -> c.add(2 * S, 6000));
    }

    @Test
    void ratePerWholeSecondAndNothingPastTheLastSample() {
        double[] r = ramp(3).perSecond(4);
        assertArrayEquals(new double[]{1000, 2000, 3000}, java.util.Arrays.copyOf(r, 3), 1e-6);
        assertTrue(Double.isNaN(r[3]));
    }

    @Test
    void theFirstMessagesRateIsTheirCountOverTheTimeToReachIt() {
        ColdCurve c = ramp(12);
        // 1,000 + 2,000 + 3,000 + 4,000 = 10,000 by 4 s: 2,500 msg/s.
        assertEquals(4 * S, c.nanosToCount(10_000), 1);
        assertEquals(2500, c.rateOfFirst(10_000), 1e-6);
        // Halfway through second 5 (5,000 msg/s): 12,500 at 4.5 s.
        assertEquals(4_500_000_000L, c.nanosToCount(12_500), 1);
        assertEquals(-1, c.nanosToCount(1_000_000));
        assertTrue(Double.isNaN(c.rateOfFirst(1_000_000)));
    }

    @Test
    void ninetyPercentOfWarmIsTheFirstOneSecondWindowAtThatRate() {
        ColdCurve c = ramp(15);
        // Warm 10,000: the first 1-s window at 9,000 msg/s is second 9 (8 to 9 s).
        assertEquals(9 * S, c.firstNanosAtRate(0.9 * 10_000, S));
        assertEquals(-1, c.firstNanosAtRate(20_000, S));
    }

    @Test
    void steadyOnceNoRollingRateOfTheLookbackRisesAboveTheBestBefore() {
        ColdCurve c = ramp(40);
        // The rate stops rising at 10 s; the 5-s rate at 15 s; then 10 s of lookback with no new best.
        assertFalse(c.steady(20 * S, 20 * S, 10 * S, 0.03), "still rising within the lookback");
        assertTrue(c.steady(26 * S, 20 * S, 10 * S, 0.03));
        assertFalse(c.steady(19 * S, 20 * S, 10 * S, 0.03), "never before the minimum");
        ColdCurve rising = new ColdCurve();
        for (int s = 1; s <= 30; s++) {
            rising.add(s * S, (long) s * s * 1000); // rate rising every second
        }
        assertFalse(rising.steady(30 * S, 20 * S, 10 * S, 0.03));
    }

    @Test
    void medianOfOddAndEvenCounts() {
        assertEquals(2.0, ColdCurve.median(List.of(3.0, 1.0, 2.0)), 1e-9);
        assertEquals(2.5, ColdCurve.median(List.of(4.0, 1.0, 2.0, 3.0)), 1e-9);
        assertTrue(Double.isNaN(ColdCurve.median(List.of())));
    }
}
