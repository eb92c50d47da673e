package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostStallsTest {

    /** Every fifth sleep oversleeps by 20 ms: each of those counts, on top of any stall of the host's own. */
    @Test
    void countsLateWakeUps() throws InterruptedException {
        AtomicInteger sleeps = new AtomicInteger();
        HostStalls watching = HostStalls.start(nanos -> {
            long oversleep = sleeps.incrementAndGet() % 5 == 0 ? TimeUnit.MILLISECONDS.toNanos(20) : 0;
            long until = System.nanoTime() + nanos + oversleep;
            while (System.nanoTime() < until) {
                LockSupport.parkNanos(until - System.nanoTime());
            }
        });
        Thread.sleep(300);
        HostStalls.Outcome o = watching.finish();
        int injected = sleeps.get() / 5;
        assertTrue(injected >= 2, "the watcher slept " + sleeps.get() + " times");
        // The host may add stalls of its own, never remove the injected ones.
        assertTrue(o.count() >= injected, o.count() + " stalls counted, " + injected + " injected");
        assertTrue(o.longestNanos() >= TimeUnit.MILLISECONDS.toNanos(19), "longest " + o.longestNanos());
        assertTrue(o.stalledNanos() >= injected * TimeUnit.MILLISECONDS.toNanos(19),
                "stalled " + o.stalledNanos() + " ns");
        assertTrue(o.stalledNanos() <= o.elapsedNanos(), "stalled longer than watched");
        assertTrue(o.describe().contains("longest"), o.describe());
    }

    @Test
    void describesCountLongestAndShareOfTime() {
        var o = new HostStalls.Outcome(3, 12_500_000, 20_000_000, 1_000_000_000);
        assertEquals("host stalls (a 1 ms sleep woken 5 ms or more late): 3, longest 12.5 ms, 2.0% of the time",
                o.describe());
    }
}
