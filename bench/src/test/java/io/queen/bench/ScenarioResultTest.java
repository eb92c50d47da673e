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

    private static CeilingPhase.Outcome ceiling(double rate) {
        return new CeilingPhase.Outcome(MESSAGES, (long) (MESSAGES / rate * 1e9));
    }

    /** Rounds each paired with a ceiling run of 200,000 msg/s. */
    private static ScenarioResult result(List<ScenarioResult.Round> rounds) {
        return new ScenarioResult(10, rounds, rounds.stream().map(r -> ceiling(200_000)).toList(), null, null, 0,
                null, null);
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
    void eachRoundsPushIsComparedWithItsOwnCeilingRun() {
        var rounds = List.of(round(100_000, 1, true), round(100_000, 1, true), round(60_000, 1, true));
        // The host slowed down in round 2: its ceiling and its push both fell.
        var ceilings = List.of(ceiling(250_000), ceiling(160_000), ceiling(240_000));
        ScenarioResult r = new ScenarioResult(10, rounds, ceilings, null, null, 0, null, null);
        List<Double> ratios = r.pushToCeilingByRound();
        assertEquals(3, ratios.size());
        assertEquals(0.4, ratios.get(0), 1e-6);
        assertEquals(0.625, ratios.get(1), 1e-6);
        assertEquals(0.25, ratios.get(2), 1e-6);
        assertEquals(0.4, r.pushToCeiling(), 1e-9);
        assertEquals(240_000, r.ceiling().messagesPerSecond(), 0.01);
    }

    @Test
    void anIncompleteRoundMakesTheWholeResultIncomplete() {
        assertTrue(result(List.of(round(1, 1, true), round(2, 2, true), round(3, 3, true))).complete());
        // Not the median round by either rate: still counted.
        assertFalse(result(List.of(round(1, 1, false), round(2, 2, true), round(3, 3, true))).complete());
    }

    @Test
    void thereIsAlwaysARoundAndACeilingRunForEach() {
        assertThrows(IllegalArgumentException.class, () -> result(List.of()));
        assertThrows(IllegalArgumentException.class, () -> new ScenarioResult(10, List.of(round(1, 1, true)),
                List.of(), null, null, 0, null, null));
    }
}
