package io.queen.broker.engine.wake;

import io.queen.broker.lifecycle.ManualTicker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hub runs on a {@link ManualTicker}: a wait times out only when a test advances the clock
 * past it, so a waiter that returns {@code true} was woken by a signal, one that returns
 * {@code false} timed out, and no test sleeps. The class timeout interrupts a wait a bug left
 * parked, instead of hanging the build.
 */
@Timeout(30)
class WakeHubTest {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final UUID OTHER_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000002");

    private final ManualTicker ticker = new ManualTicker();
    private final WakeHub hub = new WakeHub(ticker);
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    /** Parks a waiter on a virtual thread; the result is whether it was woken (else it timed out). */
    private CompletableFuture<Boolean> park(UUID tenant, String queue, long maxWaitMillis) {
        long seen = hub.version(tenant, queue);
        return CompletableFuture.supplyAsync(() -> hub.awaitChange(tenant, queue, seen, maxWaitMillis), threads);
    }

    private CompletableFuture<Boolean> parkOnTenant(UUID tenant, long maxWaitMillis) {
        long seen = hub.tenantVersion(tenant);
        return CompletableFuture.supplyAsync(() -> hub.awaitTenantChange(tenant, seen, maxWaitMillis), threads);
    }

    /** Until exactly {@code count} waiters are parked, each inside its wait on the ticker. */
    private void awaitParked(int count) {
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(2))
                .until(() -> hub.waiting() == count && ticker.waiting() == count);
    }

    @Test
    void aSignalWakesAWaiterBeforeItsTimeout() throws Exception {
        CompletableFuture<Boolean> p = park(TENANT, "orders", 30_000);
        awaitParked(1);
        hub.signal(TENANT, "orders", "p1");
        assertTrue(p.get(5, TimeUnit.SECONDS), "woken, not timed out: the ticker never moved");
    }

    @Test
    void closingReleasesEveryParkedWaiterAndNoneParksAfterwards() throws Exception {
        CompletableFuture<Boolean> queue = park(TENANT, "orders", 30_000);
        CompletableFuture<Boolean> discovery = parkOnTenant(OTHER_TENANT, 30_000);
        awaitParked(2);
        assertEquals(2, hub.close());
        assertTrue(hub.closed());
        assertTrue(queue.get(5, TimeUnit.SECONDS));
        assertTrue(discovery.get(5, TimeUnit.SECONDS));
        // A long-poll arriving after the close does not park.
        assertTrue(hub.awaitChange(TENANT, "invoices", "g", hub.version(TENANT, "invoices"), 30_000));
        assertEquals(0, hub.waiting());
    }

    @Test
    void aSignalBetweenReadingTheVersionAndParkingIsNotLost() {
        long seen = hub.version(TENANT, "orders");
        // The push commits while the pop is still running its (empty) claim.
        hub.signal(TENANT, "orders", "p1");
        // Returns at once: without the signal it would wait for a ticker nobody moves.
        assertTrue(hub.awaitChange(TENANT, "orders", seen, 30_000));
        assertEquals(0, hub.waiting());
    }

    @Test
    void noSignalMeansTimeoutAndFalse() throws Exception {
        CompletableFuture<Boolean> p = park(TENANT, "orders", 150);
        awaitParked(1);
        long begun = ticker.waitsBegun();
        ticker.advance(Duration.ofMillis(149));
        // Woken by the advance, it found time left and waits again rather than returning.
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(2))
                .until(() -> ticker.waitsBegun() > begun);
        assertFalse(p.isDone(), "1 ms before its timeout it still waits");
        ticker.advance(Duration.ofMillis(1));
        assertFalse(p.get(5, TimeUnit.SECONDS), "timed out");
        assertEquals(0, hub.waiting());
        assertEquals(0, hub.gates());
    }

    @Test
    void anotherQueuesSignalDoesNotWakeIt() throws Exception {
        CompletableFuture<Boolean> p = park(TENANT, "orders", 400);
        awaitParked(1);
        hub.signal(TENANT, "invoices", "p1");
        ticker.advance(Duration.ofMillis(400));
        assertFalse(p.get(5, TimeUnit.SECONDS), "it timed out: the signal did not wake it");
    }

    @Test
    void anotherTenantsQueueOfTheSameNameDoesNotWakeIt() throws Exception {
        CompletableFuture<Boolean> p = park(TENANT, "orders", 400);
        awaitParked(1);
        hub.signal(OTHER_TENANT, "orders", "p1");
        ticker.advance(Duration.ofMillis(400));
        assertFalse(p.get(5, TimeUnit.SECONDS), "it timed out: the signal did not wake it");
    }

    @Test
    void theTenantGateIsWokenByAnyQueueOfItsTenantOnly() throws Exception {
        CompletableFuture<Boolean> untouched = parkOnTenant(TENANT, 30_000);
        awaitParked(1);
        hub.signal(OTHER_TENANT, "anything", "p1");
        ticker.advance(Duration.ofSeconds(30));
        assertFalse(untouched.get(5, TimeUnit.SECONDS), "another tenant's push must not wake it: it timed out");
        CompletableFuture<Boolean> discovery = parkOnTenant(TENANT, 30_000);
        awaitParked(1);
        hub.signal(TENANT, "some-queue-nobody-waits-on", "p1");
        assertTrue(discovery.get(5, TimeUnit.SECONDS));
        // A push before parking counts too.
        long seenAgain = hub.tenantVersion(TENANT);
        hub.signal(TENANT, "another", null);
        assertTrue(hub.awaitTenantChange(TENANT, seenAgain, 30_000));
    }

    @Test
    void everyWaiterOfTheGateIsWoken() throws Exception {
        List<CompletableFuture<Boolean>> parked = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            parked.add(park(TENANT, "orders", 30_000));
        }
        awaitParked(20);
        assertEquals(1, hub.gates());
        hub.signal(TENANT, "orders", "p1");
        for (CompletableFuture<Boolean> p : parked) {
            assertTrue(p.get(5, TimeUnit.SECONDS));
        }
        assertEquals(0, hub.waiting());
        assertEquals(0, hub.gates());
    }

    @Test
    void gatesAreRemovedWhenTheirWaitersLeave() throws Exception {
        List<CompletableFuture<Boolean>> all = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            all.add(park(TENANT, "queue-" + i, 30_000));
        }
        awaitParked(10_000);
        assertEquals(10_000, hub.gates());
        for (int i = 0; i < 10_000; i++) {
            hub.signal(TENANT, "queue-" + i, "p" + i);
        }
        for (CompletableFuture<Boolean> f : all) {
            assertTrue(f.get(10, TimeUnit.SECONDS));
        }
        assertEquals(0, hub.waiting());
        assertEquals(0, hub.gates());
        // Signals to queues nobody waits on create nothing.
        for (int i = 0; i < 10_000; i++) {
            hub.signal(TENANT, "idle-" + i, "p");
        }
        assertEquals(0, hub.gates());
    }

    private CompletableFuture<Boolean> parkInGroup(String queue, String group) {
        long seen = hub.version(TENANT, queue);
        return CompletableFuture.supplyAsync(() -> hub.awaitChange(TENANT, queue, group, seen, 30_000), threads);
    }

    @Test
    void aCommitWakesOnePopPerGroupAndEveryGrouplessOne() throws Exception {
        List<CompletableFuture<Boolean>> a = new ArrayList<>();
        List<CompletableFuture<Boolean>> b = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            a.add(parkInGroup("orders", "A"));
            awaitParked(a.size());
        }
        for (int i = 0; i < 2; i++) {
            b.add(parkInGroup("orders", "B"));
            awaitParked(3 + b.size());
        }
        CompletableFuture<Boolean> groupless = park(TENANT, "orders", 30_000);
        awaitParked(6);
        hub.signal(TENANT, "orders", "p1");
        assertTrue(groupless.get(5, TimeUnit.SECONDS));
        // The oldest of each group goes; the others stay parked.
        assertTrue(a.getFirst().get(5, TimeUnit.SECONDS));
        assertTrue(b.getFirst().get(5, TimeUnit.SECONDS));
        awaitParked(3);
        assertFalse(a.get(1).isDone() || a.get(2).isDone() || b.get(1).isDone());
        hub.wakeGroup(TENANT, "orders", "A");
        assertTrue(a.get(1).get(5, TimeUnit.SECONDS));
        awaitParked(2);
        assertFalse(a.get(2).isDone() || b.get(1).isDone(), "wakeGroup(A) woke another group's pop");
        hub.signalAllWaiting();
        assertTrue(a.get(2).get(5, TimeUnit.SECONDS));
        assertTrue(b.get(1).get(5, TimeUnit.SECONDS));
        assertEquals(0, hub.gates());
    }

    @Test
    void commitsMarkTheHotListOfEveryGroupOfTheQueue() {
        HotList.Ring a = hub.hotList().ring(TENANT, "orders", "A");
        HotList.Ring b = hub.hotList().ring(TENANT, "orders", "B");
        hub.signal(TENANT, "orders", "p1");
        hub.signal(TENANT, "orders", "p2");
        hub.signal(TENANT, "orders", "p1");
        hub.signal(TENANT, "invoices", "p9");
        assertEquals(List.of("p1"), a.take(1), "oldest mark first");
        assertEquals(List.of("p2"), a.take(5));
        assertEquals(List.of("p1", "p2"), b.take(5));
        assertEquals(List.of(), a.take(5));
    }

    @Test
    void aRingIsTrustedOnlyAfterAScanThatNothingDirtiedMeanwhile() {
        HotList.Ring ring = hub.hotList().ring(TENANT, "orders", "A");
        assertTrue(ring.needsScan(), "a new ring has never scanned");
        assertTrue(ring.beginScan());
        assertFalse(ring.beginScan(), "one scan at a time");
        long epoch = ring.scanEpoch();
        hub.signal(TENANT, "orders", null); // partition unknown: arrives during the scan
        ring.endScan(epoch, List.of("p3"), false, true);
        assertTrue(ring.needsScan(), "dirtied while scanning");
        assertTrue(ring.beginScan());
        ring.endScan(ring.scanEpoch(), List.of(), false, true);
        assertFalse(ring.needsScan());
        ring.endScan(ring.scanEpoch(), List.of(), true, false);
        assertTrue(ring.needsScan(), "a scan cut at its limit leaves more unlisted");
        assertEquals(List.of("p3"), ring.take(5));
    }

    @Test
    void aFullRingTurnsDirtyInsteadOfGrowing() {
        HotList.Ring ring = hub.hotList().ring(TENANT, "orders", "A");
        ring.endScan(ring.scanEpoch(), List.of(), false, false);
        for (int i = 0; i < HotList.MAX_ENTRIES + 10; i++) {
            hub.signal(TENANT, "orders", "p" + i);
        }
        assertEquals(HotList.MAX_ENTRIES, ring.size());
        assertTrue(ring.needsScan());
    }

    @Test
    void signalAllWaitingWakesQueueAndTenantWaiters() throws Exception {
        CompletableFuture<Boolean> q = park(TENANT, "orders", 30_000);
        CompletableFuture<Boolean> t = parkOnTenant(OTHER_TENANT, 30_000);
        awaitParked(2);
        hub.signalAllWaiting();
        assertTrue(q.get(5, TimeUnit.SECONDS));
        assertTrue(t.get(5, TimeUnit.SECONDS));
    }
}
