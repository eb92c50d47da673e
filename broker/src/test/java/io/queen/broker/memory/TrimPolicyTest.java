package io.queen.broker.memory;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TrimPolicyTest {
    private static final long MB = 1024 * 1024;
    private static final long SECOND = 1_000_000_000L;

    private final TrimPolicy policy = new TrimPolicy(32 * MB, 8 * MB);

    @Test
    void theFirstLookOnlySetsTheBaseline() {
        assertFalse(policy.shouldTrim(0, 0, 100 * MB));
    }

    @Test
    void aQuietMinuteOverAGrownHeapTrims() {
        policy.shouldTrim(1_000 * MB, 0, 100 * MB);
        assertTrue(policy.shouldTrim(1_000 * MB + 60 * 5 * MB, 60 * SECOND, 100 * MB));
        assertEquals(5 * MB, policy.lastRateBytesPerSecond(), 1.0);
    }

    @Test
    void aBusyMinuteDoesNotTrim() {
        policy.shouldTrim(0, 0, 100 * MB);
        assertFalse(policy.shouldTrim(60 * 200 * MB, 60 * SECOND, 100 * MB), "200 MB/s is a burst");
        assertTrue(policy.shouldTrim(60 * 200 * MB + 60 * MB, 120 * SECOND, 100 * MB), "1 MB/s the minute after");
    }

    @Test
    void aTrimWaitsForTheHeapToGrowAgainByTheStep() {
        policy.shouldTrim(0, 0, 100 * MB);
        assertTrue(policy.shouldTrim(MB, 60 * SECOND, 100 * MB));
        policy.trimmed(70 * MB);
        assertFalse(policy.shouldTrim(2 * MB, 120 * SECOND, 70 * MB), "nothing grew");
        assertFalse(policy.shouldTrim(3 * MB, 180 * SECOND, 77 * MB), "7 MB is under the step");
        assertTrue(policy.shouldTrim(4 * MB, 240 * SECOND, 78 * MB), "8 MB is the step");
    }

    @Test
    void aTrimThatFoundNothingToGiveBackIsNotRepeated() {
        policy.shouldTrim(0, 0, 60 * MB);
        assertTrue(policy.shouldTrim(MB, 60 * SECOND, 60 * MB));
        policy.trimmed(60 * MB);
        assertFalse(policy.shouldTrim(2 * MB, 120 * SECOND, 60 * MB));
    }

    @Test
    void aClockThatDidNotMoveMeasuresNoRate() {
        policy.shouldTrim(0, 5 * SECOND, 100 * MB);
        assertFalse(policy.shouldTrim(MB, 5 * SECOND, 100 * MB));
    }
}
