package io.queen.broker.engine.dedup;

import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
        DedupCache.Hit hit = assertInstanceOf(DedupCache.Hit.class, cache.find(P, TxnHash.of("b")));
        assertEquals(1, hit.offset());
        assertEquals(first[1], hit.messageId());
        assertNull(cache.find(P, TxnHash.of("zzz")));
    }

    @Test
    void aGapLeftByAnotherBrokerRestartsTheBlock() {
        DedupCache cache = new DedupCache(1_000);
        Instant now = Instant.now();
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), now);
        cache.record(P, 5, TxnHash.concat(List.of("f")), ids(1), now);
        assertEquals(new DedupCache.Vouch(5, 5), cache.vouch(P, 60, now.toEpochMilli()));
        assertNull(cache.find(P, TxnHash.of("a")), "the old block is forgotten, so SQL probes it");
    }

    @Test
    void entriesLeaveWithTheWindowWithAMargin() {
        DedupCache cache = new DedupCache(1_000);
        Instant old = Instant.now().minusSeconds(59);
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), old);
        assertNull(cache.vouch(P, 60, System.currentTimeMillis()), "59 s old in a 60 s window is inside the margin");
        assertNull(cache.find(P, TxnHash.of("a")));
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
    void forgettingPartitionsDropsTheirBlocksAndKeepsTheOthers() {
        DedupCache cache = new DedupCache(1_000);
        Instant now = Instant.now();
        UUID gone = UUID.randomUUID();
        UUID alsoGone = UUID.randomUUID();
        cache.record(P, 0, TxnHash.concat(List.of("a", "b")), ids(2), now);
        cache.record(gone, 0, TxnHash.concat(List.of("x", "y", "z")), ids(3), now);
        cache.record(alsoGone, 0, TxnHash.concat(List.of("w")), ids(1), now);
        cache.forget(List.of(gone, alsoGone, UUID.randomUUID()));
        assertNull(cache.vouch(gone, 60, now.toEpochMilli()));
        assertNull(cache.find(alsoGone, TxnHash.of("w")));
        assertEquals(new DedupCache.Vouch(0, 1), cache.vouch(P, 60, now.toEpochMilli()));
        assertEquals(2, cache.size(), "the budget counts only what is left");
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
    void aFailureWhileRecordingNeverReachesThePushAndClearsTheCache() {
        try (CapturedLog log = CapturedLog.of(DedupCache.class)) {
            DedupCache cache = new DedupCache(1_000);
            Instant now = Instant.now();
            UUID other = UUID.randomUUID();
            cache.record(other, 0, TxnHash.concat(List.of("x")), ids(1), now);
            // A null id cannot be held: recording fails half-way, after the push committed.
            cache.record(P, 0, TxnHash.concat(List.of("a", "b")), new UUID[] {UUID.randomUUID(), null}, now);
            assertEquals(0, cache.size(), "what it held may not match the log any more");
            assertNull(cache.vouch(other, 60, now.toEpochMilli()));
            assertEquals(1, log.messages().size());
            assertTrue(log.messages().get(0).contains(P.toString()), log.messages().get(0));
            cache.record(P, 2, TxnHash.concat(List.of("c")), ids(1), now);
            assertEquals(new DedupCache.Vouch(2, 2), cache.vouch(P, 60, now.toEpochMilli()), "and it fills again");
        }
    }

    @Test
    void aCacheWithoutBudgetHoldsNothingSoEveryProbeRunsInSql() {
        DedupCache cache = new DedupCache(DedupCache.entriesFor(0));
        Instant now = Instant.now();
        cache.record(P, 0, TxnHash.concat(List.of("a")), ids(1), now);
        assertNull(cache.vouch(P, 60, now.toEpochMilli()));
        assertNull(cache.find(P, TxnHash.of("a")));
        assertEquals(0, cache.size());
        assertEquals(10_485, DedupCache.entriesFor(1));
    }

    @Test
    void aDroppedSegmentLeavesTheLowerOffsetOfARepeatedHash() {
        DedupCache cache = new DedupCache(1_000);
        Instant now = Instant.now();
        UUID[] first = ids(1);
        cache.record(P, 0, TxnHash.concat(List.of("a")), first, now.minusSeconds(59));
        cache.record(P, 1, TxnHash.concat(List.of("a", "b")), ids(2), now);
        DedupCache.Hit hit = assertInstanceOf(DedupCache.Hit.class, cache.find(P, TxnHash.of("a")));
        assertEquals(0, hit.offset(), "the lowest offset wins, as in the SQL probe");
        assertEquals(first[0], hit.messageId());
        assertEquals(new DedupCache.Vouch(1, 2), cache.vouch(P, 60, now.toEpochMilli()), "offset 0 left the window");
        assertNull(cache.find(P, TxnHash.of("a")), "the repeat was never indexed, so nothing vouches for it");
        assertEquals(2, cache.size());
    }

    /**
     * Records a segment of {@code n} messages at offsets {@code base}.. whose transaction ids are
     * the prefix and the offset ("m4", "m5", ...); returns their message ids.
     */
    private static UUID[] segment(DedupCache cache, UUID partition, String prefix, long base, int n, Instant at) {
        List<String> txns = new ArrayList<>();
        for (long i = base; i < base + n; i++) {
            txns.add(prefix + i);
        }
        UUID[] ids = ids(n);
        cache.record(partition, base, TxnHash.concat(txns), ids, at);
        return ids;
    }

    @Test
    void atTheBudgetOlderSegmentsBecomeFingerprintsTheBlockStillVouchesFor() {
        DedupCache cache = new DedupCache(10);
        Instant now = Instant.now();
        segment(cache, P, "m", 0, 4, now);
        segment(cache, P, "m", 4, 4, now);
        assertEquals(0, cache.compactedSize(), "within the budget everything is exact");
        UUID[] newest = segment(cache, P, "m", 8, 4, now);

        assertEquals(8, cache.compactedSize(), "all but the newest segment were compacted");
        assertEquals(12, cache.size());
        assertEquals(new DedupCache.Vouch(0, 11), cache.vouch(P, 60, now.toEpochMilli()));
        assertEquals(new DedupCache.Maybe(7), cache.find(P, TxnHash.of("m2")), "probe the rows up to the run's end");
        DedupCache.Hit hit = assertInstanceOf(DedupCache.Hit.class, cache.find(P, TxnHash.of("m9")));
        assertEquals(9, hit.offset());
        assertEquals(newest[1], hit.messageId());
        assertNull(cache.find(P, TxnHash.of("never sent")), "a new hash needs no probe");
    }

    @Test
    void aPushsCheckNarrowsTheVouchToAfterTheRunAFingerprintMatched() {
        DedupCache cache = new DedupCache(10);
        Instant now = Instant.now();
        for (int k = 0; k < 2; k++) {
            segment(cache, P, "m", k * 4L, 4, now);
        }
        UUID[] newest = segment(cache, P, "m", 8, 4, now);
        long nowMs = now.toEpochMilli();

        DedupCache.Check clean = cache.check(P, 60, nowMs, new byte[][] {TxnHash.of("new"), null});
        assertEquals(new DedupCache.Vouch(0, 11), clean.vouch(), "nothing matched: the whole block is vouched for");
        assertNull(clean.hits()[0]);

        DedupCache.Check mixed = cache.check(P, 60, nowMs,
                new byte[][] {TxnHash.of("m2"), TxnHash.of("m9"), TxnHash.of("new"), null});
        assertEquals(new DedupCache.Vouch(8, 11), mixed.vouch(), "m2's run [0, 7] is probed in SQL");
        assertNull(mixed.hits()[0], "a fingerprint is no proof: SQL decides");
        assertEquals(new DedupCache.Hit(9, newest[1]), mixed.hits()[1]);
        assertNull(mixed.hits()[2]);
        assertNull(mixed.hits()[3]);

        DedupCache.Check unknown = cache.check(UUID.randomUUID(), 60, nowMs, new byte[][] {TxnHash.of("m2")});
        assertNull(unknown.vouch());
        assertNull(unknown.hits()[0]);
    }

    @Test
    void repeatedCompactionsKeepAtMostMaxChunksAndEveryFingerprint() {
        DedupCache cache = new DedupCache(600); // 60 KB: 600 exact messages, or 2,000 as fingerprints
        Instant now = Instant.now();
        int segments = 200;
        for (int k = 0; k < segments; k++) {
            segment(cache, P, "s", k * 10L, 10, now);
            assertTrue(cache.chunks(P) <= CompactedTier.MAX_CHUNKS, "chunks after segment " + k + ": " + cache.chunks(P));
        }
        assertTrue(cache.compactedSize() > 1_000, "most of the messages are fingerprints: " + cache.compactedSize());
        assertEquals(segments * 10L, cache.size(), "nothing was dropped: fingerprints fit the budget");
        assertEquals(new DedupCache.Vouch(0, segments * 10L - 1), cache.vouch(P, 60, now.toEpochMilli()));
        for (int i = 0; i < segments * 10; i++) {
            assertNotNull(cache.find(P, TxnHash.of("s" + i)), "message " + i + " is still known");
        }
        int unknown = 0;
        for (int i = 0; i < 10_000; i++) {
            unknown += cache.find(P, TxnHash.of("new" + i)) == null ? 1 : 0;
        }
        assertEquals(10_000, unknown, "32-bit fingerprints of new hashes match nothing");
    }

    @Test
    void fingerprintsTakeFourBytesAMessage() {
        DedupCache cache = new DedupCache(600); // 60 KB
        Instant now = Instant.now();
        int segments = 1_200;
        for (int k = 0; k < segments; k++) {
            segment(cache, P, "d", k * 10L, 10, now);
        }
        // 12,000 messages in 60 KB, 5 bytes each with the newest segment exact: a hash table at
        // 2/3 load (6-12 bytes a message) would have had to drop the partition.
        assertEquals(segments * 10L, cache.size(), "nothing was dropped");
        assertEquals(new DedupCache.Vouch(0, segments * 10L - 1), cache.vouch(P, 60, now.toEpochMilli()));
        for (int i = 0; i < segments * 10; i += 7) {
            assertNotNull(cache.find(P, TxnHash.of("d" + i)), "message " + i + " is still known");
        }
    }

    @Test
    void underSteadyPressureCompactedRunsStillLeaveWithTheWindow() {
        try (CapturedLog log = CapturedLog.of(DedupCache.class)) {
            // 60 s window, a 10-message segment every 100 ms for 300 s: 6,000 messages inside the
            // window at any time, 30,000 in all; the budget holds 2,000 exact or about 12,000 as
            // fingerprints. Runs must keep leaving as they age, or the partition is dropped.
            DedupCache cache = new DedupCache(2_000);
            long t0 = System.currentTimeMillis() - 300_000;
            int segments = 3_000;
            for (int k = 0; k < segments; k++) {
                long now = t0 + k * 100L;
                assertTrue(k == 0 || cache.vouch(P, 60, now) != null, "the partition was dropped at segment " + k);
                segment(cache, P, "s", k * 10L, 10, Instant.ofEpochMilli(now));
                assertTrue(cache.size() <= 13_000, "held " + cache.size() + " at segment " + k);
            }
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("dedup cache full")), log.messages().toString());
            long now = t0 + segments * 100L;
            DedupCache.Vouch v = cache.vouch(P, 60, now);
            assertNotNull(v);
            long oldestKeptAt = t0 + v.from() / 10 * 100L;
            assertTrue(now - oldestKeptAt <= 120_000, "what is vouched for reaches at most two windows back: " + v);
            assertNotNull(cache.find(P, TxnHash.of("s" + (segments * 10 - 5_000))), "inside the window");
        }
    }

    @Test
    void aCompactedRunLeavesWholeOnceItsNewestMessageLeftTheWindow() {
        DedupCache cache = new DedupCache(10);
        Instant now = Instant.now();
        segment(cache, P, "m", 0, 4, now.minusSeconds(100));
        segment(cache, P, "m", 4, 4, now.minusSeconds(59));
        segment(cache, P, "m", 8, 4, now);
        assertEquals(8, cache.compactedSize());
        assertEquals(new DedupCache.Vouch(0, 11), cache.vouch(P, 120, now.toEpochMilli()), "inside a 120 s window");
        assertEquals(new DedupCache.Vouch(8, 11), cache.vouch(P, 60, now.toEpochMilli()),
                "its newest message is 59 s old: outside a 60 s window with the margin");
        assertEquals(0, cache.compactedSize());
        assertNull(cache.find(P, TxnHash.of("m1")));
        assertEquals(4, cache.size());
    }

    @Test
    void whenFingerprintsOutgrowTheBudgetWholePartitionsGoLeastRecentlyUsedFirst() {
        DedupCache cache = new DedupCache(10);
        Instant now = Instant.now();
        UUID other = UUID.randomUUID();
        for (int k = 0; k < 3; k++) {
            segment(cache, P, "p", k * 4L, 4, now);
        }
        assertEquals(8, cache.compactedSize());
        for (int k = 0; k < 3; k++) {
            segment(cache, other, "o", k * 4L, 4, now);
        }
        assertNull(cache.vouch(P, 60, now.toEpochMilli()), "P, least recently used, was dropped whole");
        assertEquals(new DedupCache.Vouch(0, 11), cache.vouch(other, 60, now.toEpochMilli()));
        assertEquals(12, cache.size());
    }

    /** A hash with the same first four bytes as {@code of} (its fingerprint) and different others. */
    private static byte[] collidingWith(byte[] of) {
        byte[] h = of.clone();
        for (int i = 4; i < h.length; i++) {
            h[i] = (byte) ~h[i];
        }
        return h;
    }

    @Test
    void aFingerprintCollisionIsProbedInSqlAndNeverTakenForADuplicate() {
        DedupCache cache = new DedupCache(10);
        Instant now = Instant.now();
        segment(cache, P, "m", 0, 4, now);
        segment(cache, P, "m", 4, 4, now);
        segment(cache, P, "m", 8, 4, now);
        assertEquals(8, cache.compactedSize(), "m0..m7 are fingerprints now");
        long nowMs = now.toEpochMilli();

        // A new message whose hash shares m2's fingerprint: the cache cannot tell, so it must not
        // answer it as a duplicate nor vouch for the rows that may hold it.
        byte[] impostor = collidingWith(TxnHash.of("m2"));
        assertEquals(new DedupCache.Maybe(7), cache.find(P, impostor));
        DedupCache.Check check = cache.check(P, 60, nowMs, new byte[][] {impostor});
        assertNull(check.hits()[0], "a fingerprint match is no duplicate: SQL decides, and finds nothing");
        assertEquals(new DedupCache.Vouch(8, 11), check.vouch(), "the run [0, 7] it matched is probed in SQL");

        // The exact tier compares whole hashes: a collision with m9's first bytes is simply new.
        byte[] exactImpostor = collidingWith(TxnHash.of("m9"));
        assertNull(cache.find(P, exactImpostor));
        DedupCache.Check clean = cache.check(P, 60, nowMs, new byte[][] {exactImpostor});
        assertNull(clean.hits()[0]);
        assertEquals(new DedupCache.Vouch(0, 11), clean.vouch());
    }
}
