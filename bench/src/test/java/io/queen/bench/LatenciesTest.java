package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LatenciesTest {
    @Test
    void nearestRankPercentilesInMilliseconds() {
        Latencies l = new Latencies();
        long[] micros = new long[100];
        for (int i = 0; i < 100; i++) {
            micros[i] = (100 - i) * 1000L; // 100 ms down to 1 ms
        }
        l.addAll(micros, 100);
        assertEquals(50.0, l.percentileMs(50));
        assertEquals(99.0, l.percentileMs(99));
        assertEquals(100.0, l.percentileMs(100));
        assertTrue(Double.isNaN(new Latencies().percentileMs(50)));
    }
}
