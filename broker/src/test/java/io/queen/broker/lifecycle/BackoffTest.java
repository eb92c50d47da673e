package io.queen.broker.lifecycle;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackoffTest {
    @Test
    void waitsDoubleUpToTheCapAndStartOverAfterAReset() {
        Backoff b = new Backoff(100, 500, 0);
        assertFalse(b.active());
        assertEquals(100, b.next());
        assertEquals(200, b.next());
        assertEquals(400, b.next());
        assertEquals(500, b.next());
        assertEquals(500, b.next());
        b.reset();
        assertEquals(100, b.next());
    }

    @Test
    void jitterStaysWithinItsFraction() {
        for (int i = 0; i < 10_000; i++) {
            long v = Jitter.spread(1_000, 0.25);
            assertTrue(v >= 750 && v <= 1_250, String.valueOf(v));
        }
        assertEquals(1, Jitter.spread(0, 0.5), "never below 1 ms");
    }

    @Test
    void aStopInterruptsAPause() {
        boolean[] paused = {true};
        Thread t = BackgroundThread.start("queen-test-pause", () -> paused[0] = BackgroundThread.pause(60_000));
        long start = System.nanoTime();
        BackgroundThread.stop(t, java.time.Duration.ofSeconds(5), null);
        assertFalse(t.isAlive());
        assertFalse(paused[0], "the pause reported the stop");
        assertTrue(System.nanoTime() - start < 5_000_000_000L);
    }
}
