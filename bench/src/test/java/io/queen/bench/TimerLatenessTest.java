package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimerLatenessTest {
    @Test
    void readsTheBrokersMicrosecondTimestamps() {
        assertEquals(1_000_000L * 86_400 + 123_456, TimerLateness.epochMicros("1970-01-02T00:00:00.123456Z"));
        assertEquals(TimerLateness.epochMicros(Instant.parse("2026-12-01T10:00:00Z")) + 7,
                TimerLateness.epochMicros("2026-12-01T10:00:00.000007Z"));
    }

    @Test
    void timesFireAndDeliveryAgainstTheDueTimeOfMeasuredFirstDeliveries() {
        TimerLateness l = new TimerLateness(3);
        l.record(0, false, 1_000, 2_000, 3_000);     // warm-up: delivered, not timed
        l.record(1, true, 1_000_000, 1_020_000, 1_100_000);
        l.record(1, true, 1_000_000, 1_020_000, 9_000_000); // a repeat: not timed again
        assertEquals(1, l.fire().count());
        assertEquals(20.0, l.fire().percentileMs(99));
        assertEquals(100.0, l.delivery().percentileMs(100));
        assertEquals(2, l.ledger().unique());
        assertEquals(1, l.ledger().repeats());
        assertFalse(l.ledger().complete());
        assertTrue(l.targetMet(), "100 ms is under the 250 ms target");
        l.record(2, true, 0, 0, 300_000);
        assertFalse(l.targetMet(), "a 300 ms p99 of two is over it");
    }

    @Test
    void noDeliveryIsNoTargetMet() {
        assertFalse(new TimerLateness(1).targetMet());
    }
}
