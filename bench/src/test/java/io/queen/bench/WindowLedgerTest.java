package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WindowLedgerTest {
    private final WindowLedger ledger = new WindowLedger(new TumblingWindows(1000));

    /** p0: 2 messages in [0,1000), 1 in [1000,2000), 1 in [2000,3000) (open); p1: 1 in [0,1000) (open). */
    private void pushSome() {
        ledger.pushed("p0", 10);
        ledger.pushed("p0", 900);
        ledger.pushed("p0", 1500);
        ledger.pushed("p0", 2000);
        ledger.pushed("p1", 20);
    }

    @Test
    void everyClosedWindowEmittedOnceWithItsCountIsOk() {
        pushSome();
        assertEquals(2, ledger.unemittedClosed());
        ledger.emitted("p0", 0, 2, 1_050_000);
        ledger.emitted("p0", 1000, 1, 2_200_000);
        assertEquals(0, ledger.unemittedClosed());
        WindowLedger.Verdict v = ledger.verdict();
        assertTrue(v.ok(), v.problems().toString());
        assertEquals(2, v.closedWindows());
        assertEquals(3, v.emittedSum());
        assertEquals(3, v.pushedInClosed(), "the open windows (p0 from 2000, p1's only one) are not counted");
    }

    @Test
    void aWindowEmittedTwiceAMissingOneAWrongCountAndAnEarlyOneAreMismatches() {
        pushSome();
        ledger.emitted("p0", 0, 2, 1_050_000);
        ledger.emitted("p0", 0, 2, 1_060_000);
        WindowLedger.Verdict twice = ledger.verdict();
        assertFalse(twice.ok());
        assertEquals(2, twice.problems().size(), "emitted twice, and [1000,2000) missing: " + twice.problems());
        assertEquals(4, twice.emittedSum());

        WindowLedger other = new WindowLedger(new TumblingWindows(1000));
        other.pushed("p0", 10);
        other.pushed("p0", 1200);
        other.emitted("p0", 0, 3, 1_000_000);
        assertEquals(1, other.verdict().problems().size());
        assertTrue(other.verdict().problems().get(0).contains("count 3, pushed 1"), other.verdict().problems().toString());

        WindowLedger early = new WindowLedger(new TumblingWindows(1000));
        early.pushed("p0", 10);
        early.emitted("p0", 0, 1, 1_000_000);
        assertFalse(early.verdict().ok(), "no later event of p0 was pushed, so [0,1000) was not closed");
    }

    @Test
    void closeLatencyIsTheFirstResultsReceiptMinusTheWindowEndForWindowsInsideTheSpan() {
        pushSome();
        ledger.pushed("p0", 3100);
        ledger.emitted("p0", 0, 2, 1_040_000);      // 40 ms after its end, outside the span [1000, 3000]
        ledger.emitted("p0", 1000, 1, 2_250_000);   // 250 ms
        ledger.emitted("p0", 2000, 1, 3_125_000);   // 125 ms
        ledger.emitted("p0", 1000, 1, 2_900_000);   // a repeat: not timed again
        Latencies l = ledger.closeLatency(1000, 3000);
        assertEquals(2, l.count());
        assertEquals(125.0, l.percentileMs(50));
        assertEquals(250.0, l.percentileMs(100));
    }
}
