package io.queen.broker.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * The push path's dedup cache (the reference's QUEEN_DEDUP_CACHE). Without it every push with
 * client transaction ids probes every sidecar row of the partition inside the dedup window, a cost
 * that grows with the window's content. Per partition it remembers the hashes of the segments THIS
 * broker wrote, as long as they are contiguous in offsets: such a block can be vouched for
 * ({@code log_push_one_v1} then probes only the rows outside it, written before the block or by
 * another broker since), and an incoming hash found in it is a duplicate without a database probe.
 * A write that does not follow the block (another broker wrote in between) restarts the block.
 * Entries leave by age (older than the window, with a safety margin) and by a global budget, the
 * least recently used partitions first. Correctness never depends on it: anything it does not hold
 * is probed in SQL. Records are added only after the write committed.
 *
 * <p>Memory: every pushed message passes through here and stays for the dedup window, so an entry
 * is three longs in an open-addressing table (the 16-byte hash and its offset), no object per
 * message: a map of boxed keys cost ~180 bytes and five objects per message, objects every young
 * collection had to copy. Message ids stay in the recorded segments, as two longs each in one
 * array per segment: an array of UUID objects was 100 objects a segment that lived for the window,
 * and G1 copying them was part of its 11% of the broker's push CPU.
 */
public final class DedupCache {
    private static final Logger LOG = Logger.getLogger(DedupCache.class.getName());

    /** Entries older than window minus this margin are not trusted as duplicates (clock skew with PostgreSQL). */
    static final long MARGIN_MS = 2_000;

    /**
     * Heap per cached message, about: 16 bytes of hash, 16 of message id and the index's three
     * longs a slot at a load mostly between 1/4 and 1/2 (48 to 96 bytes).
     */
    static final long BYTES_PER_ENTRY = 100;

    private static final long PRESSURE_LOG_INTERVAL_MS = 60_000;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    public record Hit(long offset, UUID messageId) {
    }

    public record Vouch(long from, long to) {
    }

    /** {@code idBits}: message i's id is (idBits[2i], idBits[2i + 1]), most then least significant bits. */
    private record Segment(long base, long end, long createdAtMs, byte[] hashes, long[] idBits) {
        int messages() {
            return idBits.length / 2;
        }

        UUID id(long offset) {
            int i = (int) (offset - base) * 2;
            return new UUID(idBits[i], idBits[i + 1]);
        }
    }

    /** One partition's contiguous block: its segments oldest first, and the index of their hashes. */
    private static final class Block {
        private final List<Segment> segments = new ArrayList<>();
        /** segments before this index have been dropped (compacted away in bulk). */
        private int first;
        final HashIndex index = new HashIndex();

        boolean isEmpty() {
            return first == segments.size();
        }

        Segment oldest() {
            return segments.get(first);
        }

        Segment newest() {
            return segments.get(segments.size() - 1);
        }

        void add(Segment s) {
            segments.add(s);
        }

        Segment pollOldest() {
            Segment s = segments.set(first++, null);
            if (first == segments.size()) {
                segments.clear();
                first = 0;
            } else if (first >= 1024 && first * 2 >= segments.size()) {
                segments.subList(0, first).clear();
                first = 0;
            }
            return s;
        }

        /** The segment holding {@code offset}: blocks are contiguous, so a binary search by base. */
        Segment covering(long offset) {
            int lo = first;
            int hi = segments.size() - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                Segment s = segments.get(mid);
                if (offset < s.base()) {
                    hi = mid - 1;
                } else if (offset > s.end()) {
                    lo = mid + 1;
                } else {
                    return s;
                }
            }
            return null;
        }

        long messages() {
            long n = 0;
            for (int i = first; i < segments.size(); i++) {
                n += segments.get(i).messages();
            }
            return n;
        }
    }

    private final long maxEntries;
    private long entries;
    /** Messages dropped for the budget, not by age, since the last warning about it. */
    private long evictedForBudget;
    private UUID lastEvictedForBudget;
    private long lastPressureLogMs;
    private final LinkedHashMap<UUID, Block> blocks = new LinkedHashMap<>(16, 0.75f, true);

    public DedupCache(long maxEntries) {
        this.maxEntries = maxEntries;
    }

    /** The budget in messages for {@code megabytes} of heap (QUEEN_DEDUP_CACHE_MB); 0 for none. */
    public static long entriesFor(long megabytes) {
        return megabytes * 1024 * 1024 / BYTES_PER_ENTRY;
    }

    /** The vouched block of a partition after dropping what left the window, or null. */
    public synchronized Vouch vouch(UUID partitionId, int windowSeconds, long nowMs) {
        Block b = blocks.get(partitionId);
        if (b == null) {
            return null;
        }
        expire(b, windowSeconds, nowMs);
        if (b.isEmpty()) {
            remove(partitionId);
            return null;
        }
        return new Vouch(b.oldest().base(), b.newest().end());
    }

    /** The stored offset and message id of an incoming hash, when this cache holds it inside the window. */
    public synchronized Hit hit(UUID partitionId, byte[] hash) {
        Block b = blocks.get(partitionId);
        if (b == null) {
            return null;
        }
        long off = b.index.get(hi(hash, 0), lo(hash, 0));
        if (off < 0) {
            return null;
        }
        Segment s = b.covering(off);
        return s == null ? null : new Hit(off, s.id(off));
    }

    /** Records a committed segment written by this broker. */
    public synchronized void record(UUID partitionId, long base, byte[] hashes, UUID[] ids, Instant createdAt) {
        if (maxEntries == 0) {
            return; // no cache: every probe runs in SQL
        }
        int n = ids.length;
        Block b = blocks.get(partitionId);
        if (b != null && !b.isEmpty() && b.newest().end() != base - 1) {
            remove(partitionId); // Not contiguous: another broker wrote in between.
            b = null;
        }
        if (b == null) {
            b = new Block();
            blocks.put(partitionId, b);
        }
        long[] idBits = new long[2 * n];
        for (int i = 0; i < n; i++) {
            idBits[2 * i] = ids[i].getMostSignificantBits();
            idBits[2 * i + 1] = ids[i].getLeastSignificantBits();
        }
        b.add(new Segment(base, base + n - 1, createdAt.toEpochMilli(), hashes, idBits));
        for (int i = 0; i < n; i++) {
            // The lowest offset wins, as in the SQL probe.
            b.index.putIfAbsent(hi(hashes, i * 16), lo(hashes, i * 16), base + i);
        }
        entries += n;
        long before = entries;
        UUID evicted = null;
        while (entries > maxEntries && !blocks.isEmpty()) {
            evicted = blocks.keySet().iterator().next();
            if (evicted.equals(partitionId) && blocks.size() == 1) {
                dropOldest(b);
            } else {
                remove(evicted);
            }
        }
        if (evicted != null) {
            budgetPressure(before - entries, evicted);
        }
    }

    /**
     * What leaves for the budget may still be inside its queue's dedup window, and a push to that
     * partition then probes the sidecar rows in SQL instead, a cost that grows with the window's
     * content: in a bench of 1,000,000-message rounds over 10 partitions, past a 2,000,000-entry
     * budget, pushes fell from 70,000 to 1,000-3,500 msg/s. Said at most once a minute.
     */
    private void budgetPressure(long evicted, UUID partitionId) {
        evictedForBudget += evicted;
        lastEvictedForBudget = partitionId;
        long now = System.currentTimeMillis();
        if (now - lastPressureLogMs >= PRESSURE_LOG_INTERVAL_MS) {
            LOG.warning(String.format("dedup cache full (%,d messages, QUEEN_DEDUP_CACHE_MB=%,d): dropped %,d "
                            + "messages' hashes that may still be inside their dedup window, the last of partition %s; "
                            + "pushes with a transactionId to those partitions probe the database for them. Raise "
                            + "QUEEN_DEDUP_CACHE_MB (and the heap) or shorten dedupWindowSeconds.", maxEntries,
                    maxEntries * BYTES_PER_ENTRY / (1024 * 1024), evictedForBudget, lastEvictedForBudget));
            lastPressureLogMs = now;
            evictedForBudget = 0;
        }
    }

    /** Forgets a partition, e.g. when a write to it failed and what it holds may no longer match. */
    public synchronized void forget(UUID partitionId) {
        remove(partitionId);
    }

    synchronized long size() {
        return entries;
    }

    private void expire(Block b, int windowSeconds, long nowMs) {
        long oldest = nowMs - windowSeconds * 1000L + MARGIN_MS;
        while (!b.isEmpty() && b.oldest().createdAtMs() < oldest) {
            dropOldest(b);
        }
    }

    private void dropOldest(Block b) {
        if (b.isEmpty()) {
            return;
        }
        Segment s = b.pollOldest();
        byte[] h = s.hashes();
        for (int i = 0; i < s.messages(); i++) {
            b.index.remove(hi(h, i * 16), lo(h, i * 16), s.base() + i);
        }
        entries -= s.messages();
    }

    private void remove(UUID partitionId) {
        Block b = blocks.remove(partitionId);
        if (b != null) {
            entries -= b.messages();
        }
    }

    private static long hi(byte[] hashes, int at) {
        return (long) LONGS.get(hashes, at);
    }

    private static long lo(byte[] hashes, int at) {
        return (long) LONGS.get(hashes, at + 8);
    }

    /**
     * 16-byte hash to offset, open addressing with linear probing in three parallel long arrays
     * (load at most 1/2), deletion by backward shift so no tombstones accumulate. An offset of -1
     * marks an empty slot (offsets are never negative).
     */
    static final class HashIndex {
        private static final int MIN_CAPACITY = 64;
        private long[] his = new long[MIN_CAPACITY];
        private long[] los = new long[MIN_CAPACITY];
        private long[] offs = emptyOffsets(MIN_CAPACITY);
        private int size;

        int size() {
            return size;
        }

        long get(long hi, long lo) {
            int mask = offs.length - 1;
            for (int i = slot(hi, lo, mask); offs[i] >= 0; i = (i + 1) & mask) {
                if (his[i] == hi && los[i] == lo) {
                    return offs[i];
                }
            }
            return -1;
        }

        void putIfAbsent(long hi, long lo, long off) {
            if ((size + 1) * 2 > offs.length) {
                resize(offs.length * 2);
            }
            int mask = offs.length - 1;
            int i = slot(hi, lo, mask);
            for (; offs[i] >= 0; i = (i + 1) & mask) {
                if (his[i] == hi && los[i] == lo) {
                    return;
                }
            }
            his[i] = hi;
            los[i] = lo;
            offs[i] = off;
            size++;
        }

        /** Removes the entry only if it maps this hash to this offset (a lower offset of the same hash stays). */
        void remove(long hi, long lo, long off) {
            int mask = offs.length - 1;
            int i = slot(hi, lo, mask);
            while (offs[i] >= 0 && !(his[i] == hi && los[i] == lo)) {
                i = (i + 1) & mask;
            }
            if (offs[i] != off) {
                return;
            }
            // Backward shift: move later members of the probe run into the hole when their home allows it.
            int hole = i;
            for (int j = (hole + 1) & mask; offs[j] >= 0; j = (j + 1) & mask) {
                int home = slot(his[j], los[j], mask);
                if (((j - home) & mask) >= ((j - hole) & mask)) {
                    his[hole] = his[j];
                    los[hole] = los[j];
                    offs[hole] = offs[j];
                    hole = j;
                }
            }
            offs[hole] = -1;
            size--;
            if (offs.length > MIN_CAPACITY && size * 8 < offs.length) {
                resize(offs.length / 2);
            }
        }

        private void resize(int capacity) {
            long[] oldHis = his;
            long[] oldLos = los;
            long[] oldOffs = offs;
            his = new long[capacity];
            los = new long[capacity];
            offs = emptyOffsets(capacity);
            int mask = capacity - 1;
            for (int k = 0; k < oldOffs.length; k++) {
                if (oldOffs[k] >= 0) {
                    int i = slot(oldHis[k], oldLos[k], mask);
                    while (offs[i] >= 0) {
                        i = (i + 1) & mask;
                    }
                    his[i] = oldHis[k];
                    los[i] = oldLos[k];
                    offs[i] = oldOffs[k];
                }
            }
        }

        private static int slot(long hi, long lo, int mask) {
            long h = (hi ^ Long.rotateLeft(lo, 32)) * 0x9E3779B97F4A7C15L;
            return (int) (h >>> 32) & mask;
        }

        private static long[] emptyOffsets(int capacity) {
            long[] a = new long[capacity];
            Arrays.fill(a, -1);
            return a;
        }
    }
}
