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
 * Entries leave by age (older than the window, with a safety margin) and by a global budget.
 * Correctness never depends on it: anything it does not hold is probed in SQL. Records are added
 * only after the write committed.
 *
 * <p>Two tiers. Recent segments are exact: each hash maps to its offset and message id, so a
 * duplicate is answered from memory. When the budget is reached, older segments are compacted to
 * 64-bit fingerprints ({@link Chunk}, 12-24 bytes a message against about 100): the block still
 * vouches for them, a hash that matches none is new without a probe, and one that matches makes
 * that push probe the rows up to the matching chunk in SQL, which finds the original (or finds
 * nothing: a fingerprint can collide). Only when the fingerprints alone outgrow the budget are
 * whole partitions dropped, least recently used first; a push to a dropped partition probes its
 * whole window in SQL, which is the cost this cache exists to avoid.
 *
 * <p>Memory: every pushed message passes through here and stays for the dedup window, so an exact
 * entry is three longs in an open-addressing table (the 16-byte hash and its offset), no object per
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
     * Heap per exact message, about: 16 bytes of hash, 16 of message id and the index's three
     * longs a slot at a load mostly between 1/4 and 1/2 (48 to 96 bytes). The budget is counted in
     * these: {@code new DedupCache(n)} holds n exact messages, or four to eight times as many
     * compacted.
     */
    static final long BYTES_PER_ENTRY = 100;

    /** A compaction frees memory down to this share of the budget, so it does not run on every write. */
    static final double COMPACT_TO = 0.9;

    /** Chunks per partition; past it two merge, so a lookup tests at most this many. */
    static final int MAX_CHUNKS = 8;

    /** Messages per chunk at most, so its table (a power of two, at most 2/3 full) fits an array. */
    static final long MAX_CHUNK_MESSAGES = 1L << 28;

    private static final long PRESSURE_LOG_INTERVAL_MS = 60_000;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** What the cache knows of an incoming hash: see {@link Hit} and {@link Maybe}. */
    public sealed interface Found permits Hit, Maybe {
    }

    /** The hash is stored at this offset, as this message. */
    public record Hit(long offset, UUID messageId) implements Found {
    }

    /** The hash's fingerprint is in a compacted run ending at {@code upTo}: probe the rows up to there in SQL. */
    public record Maybe(long upTo) implements Found {
    }

    public record Vouch(long from, long to) {
    }

    /**
     * What a push may skip in SQL: the range its probe need not read (null: none) and, per
     * incoming hash, the stored duplicate when the exact tier holds it (null otherwise).
     */
    public record Check(Vouch vouch, Hit[] hits) {
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

    /**
     * The fingerprints (first 8 bytes of each hash; 0 stored as 1, which can only add a false
     * match) of the compacted offsets [from, to], in an open-addressing set at a load of at most
     * 2/3. It leaves whole, once its newest message left the window.
     */
    static final class Chunk {
        final long from;
        final long to;
        final long newestCreatedAtMs;
        final long messages;
        private final long[] slots;

        private Chunk(long from, long to, long newestCreatedAtMs, long messages) {
            this.from = from;
            this.to = to;
            this.newestCreatedAtMs = newestCreatedAtMs;
            this.messages = messages;
            this.slots = new long[capacityFor(messages)];
        }

        static Chunk of(List<Segment> segments) {
            long n = 0;
            for (Segment s : segments) {
                n += s.messages();
            }
            Segment newest = segments.get(segments.size() - 1);
            Chunk c = new Chunk(segments.get(0).base(), newest.end(), newest.createdAtMs(), n);
            for (Segment s : segments) {
                for (int i = 0; i < s.messages(); i++) {
                    c.add(hi(s.hashes(), i * 16));
                }
            }
            return c;
        }

        /** One chunk for two adjacent ones, {@code older} first. */
        static Chunk merge(Chunk older, Chunk newer) {
            Chunk c = new Chunk(older.from, newer.to, newer.newestCreatedAtMs, older.messages + newer.messages);
            for (Chunk part : List.of(older, newer)) {
                for (long fp : part.slots) {
                    if (fp != 0) {
                        c.add(fp);
                    }
                }
            }
            return c;
        }

        boolean mightContain(long hashHi) {
            long fp = hashHi == 0 ? 1 : hashHi;
            int mask = slots.length - 1;
            for (int i = slot(fp, mask); slots[i] != 0; i = (i + 1) & mask) {
                if (slots[i] == fp) {
                    return true;
                }
            }
            return false;
        }

        long bytes() {
            return 8L * slots.length + 64;
        }

        private void add(long hashHi) {
            long fp = hashHi == 0 ? 1 : hashHi;
            int mask = slots.length - 1;
            int i = slot(fp, mask);
            while (slots[i] != 0 && slots[i] != fp) {
                i = (i + 1) & mask;
            }
            slots[i] = fp;
        }

        private static int capacityFor(long messages) {
            long wanted = Math.max(8, messages * 3 / 2 + 1);
            return (int) Math.min(1L << 30, Long.highestOneBit(wanted - 1) << 1);
        }

        private static int slot(long fp, int mask) {
            return (int) ((fp * 0x9E3779B97F4A7C15L) >>> 32) & mask;
        }
    }

    /**
     * One partition's contiguous block: compacted chunks (oldest first), then exact segments
     * (oldest first) and the index of their hashes.
     */
    private static final class Block {
        private final List<Chunk> chunks = new ArrayList<>();
        private final List<Segment> segments = new ArrayList<>();
        /** segments before this index have been dropped (compacted away in bulk). */
        private int first;
        final HashIndex index = new HashIndex();

        boolean isEmpty() {
            return chunks.isEmpty() && first == segments.size();
        }

        boolean hasSegments() {
            return first < segments.size();
        }

        int segmentCount() {
            return segments.size() - first;
        }

        long from() {
            return chunks.isEmpty() ? segments.get(first).base() : chunks.get(0).from;
        }

        long end() {
            return hasSegments() ? newest().end() : chunks.get(chunks.size() - 1).to;
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

        long exactMessages() {
            long n = 0;
            for (int i = first; i < segments.size(); i++) {
                n += segments.get(i).messages();
            }
            return n;
        }

        long chunkBytes() {
            long n = 0;
            for (Chunk c : chunks) {
                n += c.bytes();
            }
            return n;
        }

        long chunkMessages() {
            long n = 0;
            for (Chunk c : chunks) {
                n += c.messages;
            }
            return n;
        }
    }

    private final long maxBytes;
    /** Exact messages held. */
    private long entries;
    /** Messages held as fingerprints, and the heap their chunks take. */
    private long compacted;
    private long chunkBytes;
    /** Messages dropped for the budget, not by age, since the last warning about it. */
    private long evictedForBudget;
    private UUID lastEvictedForBudget;
    private long lastPressureLogMs;
    /** Messages compacted since the last note about it. */
    private long compactedForBudget;
    private long lastCompactionLogMs;
    private final LinkedHashMap<UUID, Block> blocks = new LinkedHashMap<>(16, 0.75f, true);

    /** @param maxEntries the budget, in exact messages of {@link #BYTES_PER_ENTRY} bytes each */
    public DedupCache(long maxEntries) {
        this.maxBytes = maxEntries * BYTES_PER_ENTRY;
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
        return new Vouch(b.from(), b.end());
    }

    /**
     * The vouched range and the in-memory duplicates of one push, under one lock: a block dropped
     * between a separate vouch and lookup (by another partition's write reaching the budget) would
     * have vouched for hashes the lookup no longer finds. A fingerprint match narrows the range to
     * after the run that matched, so SQL probes that run and everything before it.
     *
     * @param hashes the incoming hashes; null entries (no client transactionId) are not looked up
     */
    public synchronized Check check(UUID partitionId, int windowSeconds, long nowMs, byte[][] hashes) {
        Hit[] hits = new Hit[hashes.length];
        Vouch v = vouch(partitionId, windowSeconds, nowMs);
        if (v == null) {
            return new Check(null, hits);
        }
        Block b = blocks.get(partitionId);
        long maybeUpTo = -1;
        for (int i = 0; i < hashes.length; i++) {
            if (hashes[i] == null) {
                continue;
            }
            Found f = find(b, hashes[i]);
            if (f instanceof Hit hit) {
                hits[i] = hit;
            } else if (f instanceof Maybe maybe) {
                maybeUpTo = Math.max(maybeUpTo, maybe.upTo());
            }
        }
        if (maybeUpTo >= v.from()) {
            v = maybeUpTo < v.to() ? new Vouch(maybeUpTo + 1, v.to()) : null;
        }
        return new Check(v, hits);
    }

    /**
     * What this cache knows of an incoming hash inside the window: where it is stored ({@link Hit}),
     * that a compacted run may hold it ({@link Maybe}, the newest such run), or nothing (null).
     */
    public synchronized Found find(UUID partitionId, byte[] hash) {
        Block b = blocks.get(partitionId);
        return b == null ? null : find(b, hash);
    }

    private static Found find(Block b, byte[] hash) {
        long hi = hi(hash, 0);
        // Newest chunk first: a Maybe must say how far back the probe has to read.
        for (int i = b.chunks.size() - 1; i >= 0; i--) {
            Chunk c = b.chunks.get(i);
            if (c.mightContain(hi)) {
                // Also when the exact tier holds it: SQL answers with the lowest offset, as it would without a cache.
                return new Maybe(c.to);
            }
        }
        long off = b.index.get(hi, lo(hash, 0));
        Segment s = off < 0 ? null : b.covering(off);
        return s == null ? null : new Hit(off, s.id(off));
    }

    /** Records a committed segment written by this broker. */
    public synchronized void record(UUID partitionId, long base, byte[] hashes, UUID[] ids, Instant createdAt) {
        if (maxBytes == 0) {
            return; // no cache: every probe runs in SQL
        }
        int n = ids.length;
        Block b = blocks.get(partitionId);
        if (b != null && !b.isEmpty() && b.end() != base - 1) {
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
        if (used() > maxBytes) {
            relieve(b);
        }
    }

    private long used() {
        return entries * BYTES_PER_ENTRY + chunkBytes;
    }

    /**
     * Over budget: first compacts the exact segments of the least recently used partitions, each
     * keeping its newest segment exact (a client's retry of its last push is the likeliest
     * duplicate), down to {@link #COMPACT_TO} of the budget; then, if fingerprints alone are too
     * many, drops whole partitions, least recently used first.
     */
    private void relieve(Block current) {
        long target = (long) (maxBytes * COMPACT_TO);
        long before = entries;
        for (Block b : blocks.values()) {
            if (used() <= target) {
                break;
            }
            if (b.segmentCount() > 1) {
                compact(b);
            }
        }
        compactedForBudget += before - entries;
        if (before > entries) {
            compactionNote();
        }
        long held = entries + compacted;
        UUID evicted = null;
        while (used() > maxBytes && !blocks.isEmpty()) {
            evicted = blocks.keySet().iterator().next();
            if (blocks.get(evicted) == current && blocks.size() == 1) {
                dropOldest(current);
            } else {
                remove(evicted);
            }
        }
        if (evicted != null) {
            budgetPressure(held - entries - compacted, evicted);
        }
    }

    /** All but the newest exact segment of the block become one chunk (merged into the last when too many). */
    private void compact(Block b) {
        List<Segment> run = new ArrayList<>();
        long messages = 0;
        while (b.segmentCount() > 1) {
            if (messages + b.oldest().messages() > MAX_CHUNK_MESSAGES) {
                addChunk(b, Chunk.of(run));
                run = new ArrayList<>();
                messages = 0;
            }
            Segment s = dropOldestSegment(b);
            messages += s.messages();
            run.add(s);
        }
        addChunk(b, Chunk.of(run));
        mergeSmallestPair(b);
    }

    private void addChunk(Block b, Chunk c) {
        b.chunks.add(c);
        compacted += c.messages;
        chunkBytes += c.bytes();
    }

    /**
     * Past {@link #MAX_CHUNKS}, the two adjacent chunks with the fewest messages between them
     * merge (size-tiered): the newest runs, usually the small ones, merge among themselves, so a
     * fingerprint match in them narrows the vouch to a short range, and the large old runs are
     * left to leave with the window. A merged chunk leaves only once its newest message did.
     */
    private void mergeSmallestPair(Block b) {
        if (b.chunks.size() <= MAX_CHUNKS) {
            return;
        }
        int best = -1;
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i + 1 < b.chunks.size(); i++) {
            long n = b.chunks.get(i).messages + b.chunks.get(i + 1).messages;
            if (n < fewest && n <= MAX_CHUNK_MESSAGES) {
                fewest = n;
                best = i;
            }
        }
        if (best < 0) {
            return; // every pair too large to merge: more chunks, and slower lookups, instead
        }
        Chunk older = b.chunks.get(best);
        Chunk newer = b.chunks.remove(best + 1);
        Chunk merged = Chunk.merge(older, newer);
        b.chunks.set(best, merged);
        chunkBytes += merged.bytes() - older.bytes() - newer.bytes();
    }

    /** Compaction costs nothing for new messages, but a duplicate of a compacted one is confirmed in SQL. */
    private void compactionNote() {
        long now = System.currentTimeMillis();
        if (now - lastCompactionLogMs >= PRESSURE_LOG_INTERVAL_MS) {
            LOG.info(String.format("dedup cache at its budget (QUEEN_DEDUP_CACHE_MB=%,d): %,d messages' hashes kept as "
                            + "fingerprints since the last note (%,d exact, %,d as fingerprints now); a duplicate of "
                            + "one is confirmed in the database", budgetMb(), compactedForBudget, entries, compacted));
            lastCompactionLogMs = now;
            compactedForBudget = 0;
        }
    }

    /**
     * What leaves for the budget may still be inside its queue's dedup window, and a push to that
     * partition then probes the sidecar rows in SQL instead, a cost that grows with the window's
     * content: in a bench of 1,000,000-message rounds over 10 partitions, past a 2,000,000-entry
     * budget (before fingerprints), pushes fell from 70,000 to 1,000-3,500 msg/s. Said at most once
     * a minute.
     */
    private void budgetPressure(long evicted, UUID partitionId) {
        evictedForBudget += evicted;
        lastEvictedForBudget = partitionId;
        long now = System.currentTimeMillis();
        if (now - lastPressureLogMs >= PRESSURE_LOG_INTERVAL_MS) {
            LOG.warning(String.format("dedup cache full (QUEEN_DEDUP_CACHE_MB=%,d, %,d messages held): dropped %,d "
                            + "messages' hashes that may still be inside their dedup window, the last of partition %s; "
                            + "pushes with a transactionId to those partitions probe the database for them. Raise "
                            + "QUEEN_DEDUP_CACHE_MB (and the heap) or shorten dedupWindowSeconds.",
                    budgetMb(), entries + compacted, evictedForBudget, lastEvictedForBudget));
            lastPressureLogMs = now;
            evictedForBudget = 0;
        }
    }

    private long budgetMb() {
        return Math.round(maxBytes / (1024.0 * 1024));
    }

    /** Messages held, exact and compacted. */
    synchronized long size() {
        return entries + compacted;
    }

    /** Messages held as fingerprints. */
    synchronized long compactedSize() {
        return compacted;
    }

    /** The partition's compacted runs. */
    synchronized int chunks(UUID partitionId) {
        Block b = blocks.get(partitionId);
        return b == null ? 0 : b.chunks.size();
    }

    private void expire(Block b, int windowSeconds, long nowMs) {
        long oldest = nowMs - windowSeconds * 1000L + MARGIN_MS;
        while (!b.chunks.isEmpty() && b.chunks.get(0).newestCreatedAtMs < oldest) {
            dropOldest(b);
        }
        // Chunks hold older messages than any exact segment: with one left, no segment is old enough.
        while (b.chunks.isEmpty() && b.hasSegments() && b.oldest().createdAtMs() < oldest) {
            dropOldest(b);
        }
    }

    /** Drops the block's oldest chunk, or its oldest segment when it has no chunk left. */
    private void dropOldest(Block b) {
        if (!b.chunks.isEmpty()) {
            Chunk c = b.chunks.remove(0);
            compacted -= c.messages;
            chunkBytes -= c.bytes();
        } else if (b.hasSegments()) {
            dropOldestSegment(b);
        }
    }

    /** Takes the block's oldest exact segment out of it and out of its index. */
    private Segment dropOldestSegment(Block b) {
        Segment s = b.pollOldest();
        byte[] h = s.hashes();
        for (int i = 0; i < s.messages(); i++) {
            b.index.remove(hi(h, i * 16), lo(h, i * 16), s.base() + i);
        }
        entries -= s.messages();
        return s;
    }

    private void remove(UUID partitionId) {
        Block b = blocks.remove(partitionId);
        if (b != null) {
            entries -= b.exactMessages();
            compacted -= b.chunkMessages();
            chunkBytes -= b.chunkBytes();
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
