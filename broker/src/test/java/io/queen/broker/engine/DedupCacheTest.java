package io.queen.broker.engine;

import io.queen.broker.engine.segment.TxnHash;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

class DedupCacheTest {
    static final UUID P = UUID.randomUUID();

    private static UUID[] ids(int n) {
        UUID[] out = new UUID[n];
        for (int i = 0; i < n; i++) {
            out[i] = UUID.randomUUID();
        }
        return out;
    }

    @Test
    void contiguousWritesFormOneVouchedBlockAndAnswerHits() {
        DedupCache cache = new DedupCache(1_000);
        Instant now = Instant.now();
        UUID[] first = ids(2);
        cache.record(P, 0, TxnHash.concat(List.of("a", "b")), first, now);
        cache.record(P, 2, TxnHash.concat(List.of("c")), ids(1), now);
        assertEquals(new DedupCache.Vouch(0, 2), cache.vouch(P, 60, now.toEpochMilli()));
        DedupCache.Hit hit = cache.hit(P, TxnHash.of("b"));
        assertNotNull(hit);
        assertEquals(1, hit.offset());
        assertEquals(first[1], hit.messageId());
        assertNull(cache.hit(P, TxnHash.of("zzz")));
    }

    @Test
    void aGapLeftByAnotherBrokerRestartsTheBlock() {
        DedupCache cache = new DedupCache(1_000);
        Instant now = Instant.now();
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), now);
        cache.record(P, 5, TxnHash.concat(List.of("f")), ids(1), now);
        assertEquals(new DedupCache.Vouch(5, 5), cache.vouch(P, 60, now.toEpochMilli()));
        assertNull(cache.hit(P, TxnHash.of("a")), "the old block is forgotten, so SQL probes it");
    }

    @Test
    void entriesLeaveWithTheWindowWithAMargin() {
        DedupCache cache = new DedupCache(1_000);
        Instant old = Instant.now().minusSeconds(59);
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), old);
        assertNull(cache.vouch(P, 60, System.currentTimeMillis()), "59 s old in a 60 s window is inside the margin");
        assertNull(cache.hit(P, TxnHash.of("a")));
        assertEquals(0, cache.size());
    }

    @Test
    void theBudgetEvictsTheLeastRecentlyUsedPartition() {
        DedupCache cache = new DedupCache(3);
        Instant now = Instant.now();
        UUID other = UUID.randomUUID();
        cache.record(P, 0, TxnHash.concat(List.of("a", "b")), ids(2), now);
        cache.record(other, 0, TxnHash.concat(List.of("x", "y")), ids(2), now);
        assertNull(cache.vouch(P, 60, now.toEpochMilli()));
        assertNotNull(cache.vouch(other, 60, now.toEpochMilli()));
        assertEquals(2, cache.size());
    }
}
