package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScenarioResultTest {
    private static final long MESSAGES = 100_000;

    /** A round pushing at {@code pushRate} and consuming at {@code consumeRate} msg/s. */
    private static ScenarioResult.Round round(double pushRate, double consumeRate, boolean complete) {
        var push = new PushPhase.Outcome(MESSAGES, 0, (long) (MESSAGES / pushRate * 1e9), null, new Latencies());
        var consume = new ConsumePhase.Outcome(MESSAGES, 0, 0, complete, (long) (MESSAGES / consumeRate * 1e9), null,
                new Latencies(), null);
        return new ScenarioResult.Round(push, new CpuMeter.PerMessage(pushRate, 0, 0), 0, consume);
    }

    private static ScenarioResult result(List<ScenarioResult.Round> rounds) {
        var ceiling = new CeilingPhase.Outcome(MESSAGES, (long) (MESSAGES / 200_000.0 * 1e9));
        return new ScenarioResult(10, rounds, null, null, 0, null, ceiling, null);
    }

    @Test
    void pushAndConsumeAreEachTheMedianRoundByRate() {
        var slowPush = round(60_000, 90_000, true);
        var medianPush = round(100_000, 50_000, true);
        var fastPush = round(120_000, 70_000, true);
        ScenarioResult r = result(List.of(fastPush, slowPush, medianPush));
        assertSame(medianPush.push(), r.push());
        // The push's CPU figures come from the same round as its rate.
        assertEquals(100_000, r.pushCpu().broker());
        assertSame(fastPush.consume(), r.consume());
        assertEquals(0.5, r.pushToCeiling(), 1e-9);
    }

    @Test
    void anIncompleteRoundMakesTheWholeResultIncomplete() {
        assertTrue(result(List.of(round(1, 1, true), round(2, 2, true), round(3, 3, true))).complete());
        // Not the median round by either rate: still counted.
        assertFalse(result(List.of(round(1, 1, false), round(2, 2, true), round(3, 3, true))).complete());
    }

    @Test
    void thereIsAlwaysARound() {
        assertThrows(IllegalArgumentException.class, () -> result(List.of()));
    }
}
