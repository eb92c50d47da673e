package io.queen.broker.engine.wake;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HotListTest {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");

    @Test
    void ringsOfGroupsThatStoppedPoppingAreDroppedInsteadOfMarked() throws Exception {
        HotList hot = new HotList(1_000_000L); // 1 ms without a pop asking counts as idle here
        HotList.Ring gone = hot.ring(TENANT, "orders", "short-lived");
        hot.ring(TENANT, "invoices", "short-lived");
        Thread.sleep(20);
        HotList.Ring active = hot.ring(TENANT, "orders", "workers");
        hot.mark(TENANT, "orders", "p1");
        assertEquals(2, hot.ringCount(), "the idle ring of orders is gone; the idle one of invoices is untouched");
        assertEquals(List.of("p1"), active.take(5));
        assertEquals(0, gone.size(), "a dropped ring is not marked");
        HotList.Ring again = hot.ring(TENANT, "orders", "short-lived");
        assertNotSame(gone, again);
        assertTrue(again.needsScan(), "a group coming back starts from a scan");
        Thread.sleep(20);
        hot.mark(TENANT, "invoices", null);
        hot.mark(TENANT, "orders", "p2");
        assertEquals(0, hot.ringCount());
        assertSame(hot.ring(TENANT, "orders", "workers"), hot.ring(TENANT, "orders", "workers"));
    }
}
