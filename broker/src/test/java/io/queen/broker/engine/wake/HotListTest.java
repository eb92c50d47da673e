package io.queen.broker.engine.wake;

import io.queen.broker.lifecycle.ManualTicker;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HotListTest {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    /** Just past the time a ring may go unasked before a mark drops it. */
    private static final Duration IDLE = Duration.ofNanos(HotList.IDLE_RING_NANOS + 1);

    private final ManualTicker ticker = new ManualTicker();

    @Test
    void ringsOfGroupsThatStoppedPoppingAreDroppedInsteadOfMarked() {
        HotList hot = new HotList(ticker);
        HotList.Ring gone = hot.ring(TENANT, "orders", "short-lived");
        hot.ring(TENANT, "invoices", "short-lived");
        ticker.advance(IDLE);
        HotList.Ring active = hot.ring(TENANT, "orders", "workers");
        hot.mark(TENANT, "orders", "p1");
        assertEquals(2, hot.ringCount(), "the idle ring of orders is gone; the idle one of invoices is untouched");
        assertEquals(List.of("p1"), active.take(5));
        assertEquals(0, gone.size(), "a dropped ring is not marked");
        HotList.Ring again = hot.ring(TENANT, "orders", "short-lived");
        assertNotSame(gone, again);
        assertTrue(again.needsScan(), "a group coming back starts from a scan");
        ticker.advance(IDLE);
        hot.mark(TENANT, "invoices", null);
        hot.mark(TENANT, "orders", "p2");
        assertEquals(0, hot.ringCount());
        assertSame(hot.ring(TENANT, "orders", "workers"), hot.ring(TENANT, "orders", "workers"));
    }

    @Test
    void aRingAskedForWithinTheIdleTimeStaysMarked() {
        HotList hot = new HotList(ticker);
        HotList.Ring ring = hot.ring(TENANT, "orders", "workers");
        ticker.advance(Duration.ofNanos(HotList.IDLE_RING_NANOS));
        hot.mark(TENANT, "orders", "p1");
        assertEquals(1, hot.ringCount(), "exactly the idle time is not past it");
        ticker.advance(Duration.ofNanos(HotList.IDLE_RING_NANOS - 1));
        assertSame(ring, hot.ring(TENANT, "orders", "workers"), "asking again restarts its idle time");
        ticker.advance(Duration.ofNanos(HotList.IDLE_RING_NANOS));
        hot.mark(TENANT, "orders", "p2");
        assertEquals(List.of("p1", "p2"), ring.take(5));
    }

    @Test
    void aRingCountsTheTimeSinceItsLastScanOnItsClock() {
        HotList.Ring ring = new HotList(ticker).ring(TENANT, "orders", "workers");
        assertTrue(ring.sinceLastScanNanos() >= Duration.ofHours(1).toNanos(), "never scanned: long ago");
        ring.endScan(ring.scanEpoch(), List.of(), false, false);
        assertEquals(0, ring.sinceLastScanNanos());
        ticker.advance(Duration.ofMillis(1_500));
        assertEquals(Duration.ofMillis(1_500).toNanos(), ring.sinceLastScanNanos());
    }
}
