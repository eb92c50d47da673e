package io.queen.broker.engine;

import io.queen.broker.lifecycle.ManualTicker;
import io.queen.broker.store.LogStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The catalog's TTL measured on a clock the test moves: no five-second waits. */
class TtlCacheTest {
    private static final Duration TTL = Duration.ofNanos(QueueCatalog.TTL_NANOS);

    private final ManualTicker ticker = new ManualTicker();
    private final TtlCache<String, Integer> cache = new TtlCache<>(ticker);

    @Test
    void aValueIsFreshUntilTheTtlEndsThenOnlyLastRead() {
        cache.put("q", 7);
        assertEquals(7, cache.fresh("q"));
        ticker.advance(TTL.minusNanos(1));
        assertEquals(7, cache.fresh("q"), "one nanosecond short of the TTL");
        ticker.advance(Duration.ofNanos(1));
        assertNull(cache.fresh("q"), "stale at exactly the TTL");
        assertEquals(7, cache.lastRead("q"), "a stale value is still the last one read");
    }

    @Test
    void aPutRestartsTheTtlAndARemoveForgets() {
        cache.put("q", 1);
        ticker.advance(TTL.minusSeconds(1));
        cache.put("q", 2);
        ticker.advance(Duration.ofSeconds(2));
        assertEquals(2, cache.fresh("q"), "aged from the second read, not the first");
        cache.remove("q");
        assertNull(cache.fresh("q"));
        assertNull(cache.lastRead("q"));
    }

    @Test
    void theBoundClearsTheMapWhole() {
        for (int i = 0; i < TtlCache.MAX_ENTRIES; i++) {
            cache.put("k" + i, i);
        }
        cache.put("last", -1);
        assertNull(cache.lastRead("k0"), "cleared at the bound");
        assertEquals(-1, cache.fresh("last"));
    }

    @Test
    void theCatalogServesAQueueFromCacheForTheTtlOnly() {
        QueueCatalog catalog = new QueueCatalog(ticker);
        UUID tenant = UUID.randomUUID();
        LogStore.Provisioned p = new LogStore.Provisioned(UUID.randomUUID(), UUID.randomUUID(), 0, false);
        catalog.remember(tenant, "orders", "Default", p);
        assertEquals(p.partitionId(), catalog.cached(tenant, "orders", "Default").partitionId());
        ticker.advance(TTL);
        assertNull(catalog.cached(tenant, "orders", null), "re-read after the TTL");
        assertNull(catalog.cached(tenant, "orders", "Default"), "the partition goes with its queue's entry");
    }
}
