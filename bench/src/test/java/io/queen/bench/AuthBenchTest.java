package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AuthBenchTest {
    private static AuthBench.Round push(double rate) {
        return new AuthBench.Round(rate, 10, rate / 2, 12, true);
    }

    @Test
    void medianOfOddAndEvenRounds() {
        assertEquals(50, AuthBench.median(List.of(push(70), push(40), push(50)), AuthBench.Round::pushRate));
        assertEquals(45, AuthBench.median(List.of(push(70), push(40), push(50), push(30)), AuthBench.Round::pushRate));
    }

    @Test
    void costIsTheShareOfPushRateLost() {
        assertEquals(5.0, AuthBench.percentCost(100_000, 95_000), 1e-9);
        assertEquals(-10.0, AuthBench.percentCost(100_000, 110_000), 1e-9);
    }

    @Test
    void reportNamesTheTargetAndTheLoad() {
        BenchOptions o = BenchOptions.parse("--partitions", "10", "--messages", "100000");
        String text = AuthBench.report(o, 10, List.of(push(100_000), push(90_000), push(110_000)),
                List.of(push(80_000), push(85_000), push(90_000)), "1.50", "2.00");
        assertTrue(text.contains("load average 1.50 at start, 2.00 at end"), text);
        assertTrue(text.contains("-15.0%"), text);
        assertTrue(text.contains("NOT met"), text);
    }
}
