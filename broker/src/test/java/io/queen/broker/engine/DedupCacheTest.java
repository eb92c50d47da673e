package io.queen.broker.engine;

import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void evictingForTheBudgetWarnsNamingThePartition() {
        try (CapturedLog log = CapturedLog.of(DedupCache.class)) {
            DedupCache cache = new DedupCache(3);
            Instant now = Instant.now();
            UUID other = UUID.randomUUID();
            cache.record(P, 0, TxnHash.concat(List.of("a", "b")), ids(2), now);
            assertEquals(List.of(), log.messages(), "within the budget: nothing to say");
            cache.record(other, 0, TxnHash.concat(List.of("x", "y")), ids(2), now);
            assertEquals(1, log.messages().size());
            assertTrue(log.messages().get(0).contains(P.toString()), log.messages().get(0));
            cache.record(P, 0, TxnHash.concat(List.of("c", "d")), ids(2), now);
            assertEquals(1, log.messages().size(), "at most once a minute");
        }
    }

    @Test
    void aCacheWithoutBudgetHoldsNothingSoEveryProbeRunsInSql() {
        DedupCache cache = new DedupCache(DedupCache.entriesFor(0));
        Instant now = Instant.now();
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), now);
        assertNull(cache.vouch(P, 60, now.toEpochMilli()));
        assertNull(cache.hit(P, TxnHash.of("a")));
        assertEquals(0, cache.size());
        assertEquals(10_485, DedupCache.entriesFor(1));
    }

    @Test
    void theHashIndexAgreesWithAMapThroughGrowthDeletionAndShrinking() {
        DedupCache.HashIndex index = new DedupCache.HashIndex();
        Map<List<Long>, Long> model = new HashMap<>();
        List<List<Long>> keys = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(7);
        long nextOffset = 0;
        for (int step = 0; step < 200_000; step++) {
            int op = random.nextInt(10);
            if (op < 5 || keys.isEmpty()) {
                // Few distinct high words, so probe runs collide and wrap often.
                List<Long> k = random.nextInt(4) == 0 && !keys.isEmpty()
                        ? keys.get(random.nextInt(keys.size()))
                        : List.of((long) random.nextInt(8), random.nextLong());
                long off = nextOffset++;
                index.putIfAbsent(k.get(0), k.get(1), off);
                if (model.putIfAbsent(k, off) == null) {
                    keys.add(k);
                }
            } else if (op < 8) {
                int at = random.nextInt(keys.size());
                List<Long> k = keys.get(at);
                long stored = model.get(k);
                // A wrong offset leaves the entry; the right one removes it.
                index.remove(k.get(0), k.get(1), stored + 1);
                index.remove(k.get(0), k.get(1), stored);
                model.remove(k);
                keys.set(at, keys.get(keys.size() - 1));
                keys.remove(keys.size() - 1);
            } else {
                List<Long> k = random.nextBoolean() && !keys.isEmpty()
                        ? keys.get(random.nextInt(keys.size()))
                        : List.of(random.nextLong(), random.nextLong());
                assertEquals(model.getOrDefault(k, -1L), index.get(k.get(0), k.get(1)), "step " + step);
            }
            assertEquals(model.size(), index.size());
        }
        for (List<Long> k : keys) {
            assertEquals(model.get(k), index.get(k.get(0), k.get(1)));
        }
    }

    @Test
    void aDroppedSegmentLeavesTheLowerOffsetOfARepeatedHash() {
        DedupCache cache = new DedupCache(3);
        Instant now = Instant.now();
        UUID[] first = ids(1);
        cache.record(P, 0, TxnHash.concat(List.of("a")), first, now);
        cache.record(P, 1, TxnHash.concat(List.of("a", "b")), ids(2), now);
        DedupCache.Hit hit = cache.hit(P, TxnHash.of("a"));
        assertNotNull(hit);
        assertEquals(0, hit.offset(), "the lowest offset wins, as in the SQL probe");
        assertEquals(first[0], hit.messageId());
        cache.record(P, 3, TxnHash.concat(List.of("c")), ids(1), now); // over budget: offset 0 is dropped
        assertNull(cache.hit(P, TxnHash.of("a")), "the repeat was never indexed, so nothing vouches for it");
        assertEquals(3, cache.size());
    }
}
