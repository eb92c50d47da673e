package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TumblingWindowsTest {
    private final TumblingWindows w = new TumblingWindows(1000);

    @Test
    void anEventFallsInTheWindowFromItsFlooredStartToTheNextStart() {
        assertEquals(5000, w.start(5000));
        assertEquals(5000, w.start(5999));
        assertEquals(6000, w.start(6000), "the end belongs to the next window");
        assertEquals(-1000, w.start(-1), "floored, not truncated");
        assertEquals(6000, w.end(5000));
    }

    @Test
    void countsGroupABatchByWindowInOrder() {
        assertEquals(Map.of(5000L, 2L, 6000L, 1L, 8000L, 1L), w.counts(6100, 5000, 5999, 8000));
        assertEquals(java.util.List.of(5000L, 6000L, 8000L), java.util.List.copyOf(w.counts(8000, 6100, 5000).keySet()));
    }

    @Test
    void stateKeysRoundTripAndOthersAreRefused() {
        assertEquals("win:5000", TumblingWindows.key(5000));
        assertEquals(5000, TumblingWindows.startOf(TumblingWindows.key(5000)));
        assertThrows(IllegalArgumentException.class, () -> TumblingWindows.startOf("__wm__"));
        assertThrows(IllegalArgumentException.class, () -> new TumblingWindows(0));
    }
}
