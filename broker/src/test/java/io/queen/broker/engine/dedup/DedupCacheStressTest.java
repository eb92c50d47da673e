package io.queen.broker.engine.dedup;

import io.queen.broker.engine.segment.TxnHash;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random writes, gaps and lookups under a budget far below the load, checked against a plain map
 * of what was written: the cache may forget anything, but it must never throw (it runs after a
 * commit, where a failure would make the push retry and answer its own rows as duplicates) and
 * never vouch for a range that hides a stored hash it then does not report.
 */
class DedupCacheStressTest {
    private static final int WINDOW_S = 60;

    private record Stored(long offset, UUID id, long createdAtMs) {
    }

    @Test
    void aSmallBudgetUnderRandomLoadNeverThrowsAndNeverHidesAStoredHash() {
        for (long seed = 1; seed <= 10; seed++) {
            run(new Random(seed), seed);
        }
    }

    private static void run(Random random, long seed) {
        DedupCache cache = new DedupCache(500 + random.nextInt(3_000));
        List<UUID> partitions = new ArrayList<>();
        for (int i = 0; i < 1 + random.nextInt(40); i++) {
            partitions.add(UUID.randomUUID());
        }
        Map<UUID, Long> next = new HashMap<>();
        Map<UUID, Map<String, Stored>> stored = new HashMap<>();
        Map<UUID, List<String>> storedKeys = new HashMap<>();
        long now = 1_000_000_000L;
        long txn = 0;
        for (int step = 0; step < 4_000; step++) {
            now += random.nextInt(200);
            UUID p = partitions.get(random.nextInt(partitions.size()));
            long base = next.getOrDefault(p, 0L);
            if (random.nextInt(20) == 0) {
                base += 1 + random.nextInt(5); // another broker wrote in between
            }
            int n = 1 + (random.nextInt(10) == 0 ? random.nextInt(600) : random.nextInt(20));
            List<String> txns = new ArrayList<>(n);
            UUID[] ids = new UUID[n];
            for (int i = 0; i < n; i++) {
                txns.add("t" + txn++);
                ids[i] = UUID.randomUUID();
            }
            byte[][] probe = new byte[8][];
            List<String> probed = new ArrayList<>();
            Map<String, Stored> known = stored.computeIfAbsent(p, k -> new HashMap<>());
            List<String> keys = storedKeys.computeIfAbsent(p, k -> new ArrayList<>());
            for (int i = 0; i < probe.length; i++) {
                String t = !keys.isEmpty() && random.nextBoolean() ? keys.get(random.nextInt(keys.size())) : "new" + txn + "-" + i;
                probed.add(t);
                probe[i] = TxnHash.of(t);
            }
            DedupCache.Check check;
            try {
                check = cache.check(p, WINDOW_S, now, probe);
                cache.record(p, base, TxnHash.concat(txns), ids, Instant.ofEpochMilli(now));
            } catch (RuntimeException e) {
                throw new AssertionError("seed " + seed + " step " + step + ": the cache threw", e);
            }
            for (int i = 0; i < probe.length; i++) {
                Stored s = known.get(probed.get(i));
                DedupCache.Hit hit = check.hits()[i];
                if (hit != null) {
                    if (s == null) {
                        fail("seed " + seed + " step " + step + ": a hit for a hash never stored");
                    }
                    assertEquals(s.offset(), hit.offset(), "seed " + seed + ": the hit's offset");
                    assertEquals(s.id(), hit.messageId(), "seed " + seed + ": the hit's message id");
                } else if (s != null && check.vouch() != null && now - s.createdAtMs() < WINDOW_S * 1000L - Block.MARGIN_MS) {
                    DedupCache.Vouch v = check.vouch();
                    assertTrue(s.offset() < v.from() || s.offset() > v.to(),
                            "seed " + seed + " step " + step + ": a stored hash inside the vouched range went unreported");
                }
            }
            for (int i = 0; i < n; i++) {
                known.put(txns.get(i), new Stored(base + i, ids[i], now));
                keys.add(txns.get(i));
            }
            next.put(p, base + n);
            assertTrue(cache.size() >= 0 && cache.compactedSize() >= 0 && cache.compactedSize() <= cache.size(),
                    "seed " + seed + ": the usage stays consistent");
        }
    }
}
