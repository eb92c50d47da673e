package io.queen.broker.engine;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

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
 */
public final class DedupCache {
    /** Entries older than window minus this margin are not trusted as duplicates (clock skew with PostgreSQL). */
    static final long MARGIN_MS = 2_000;

    public record Hit(long offset, UUID messageId) {
    }

    public record Vouch(long from, long to) {
    }

    private record Segment(long base, long end, long createdAtMs, byte[] hashes, UUID[] ids) {
    }

    private static final class Block {
        final ArrayDeque<Segment> segments = new ArrayDeque<>();
        final Map<ByteBuffer, Long> offsets = new HashMap<>();
        final Map<Long, UUID> idsByOffset = new HashMap<>();
    }

    private final long maxEntries;
    private long entries;
    private final LinkedHashMap<UUID, Block> blocks = new LinkedHashMap<>(16, 0.75f, true);

    public DedupCache(long maxEntries) {
        this.maxEntries = maxEntries;
    }

    /** The vouched block of a partition after dropping what left the window, or null. */
    public synchronized Vouch vouch(UUID partitionId, int windowSeconds, long nowMs) {
        Block b = blocks.get(partitionId);
        if (b == null) {
            return null;
        }
        expire(b, windowSeconds, nowMs);
        if (b.segments.isEmpty()) {
            remove(partitionId);
            return null;
        }
        return new Vouch(b.segments.peekFirst().base(), b.segments.peekLast().end());
    }

    /** The stored offset and message id of an incoming hash, when this cache holds it inside the window. */
    public synchronized Hit hit(UUID partitionId, byte[] hash) {
        Block b = blocks.get(partitionId);
        if (b == null) {
            return null;
        }
        Long off = b.offsets.get(ByteBuffer.wrap(hash));
        return off == null ? null : new Hit(off, b.idsByOffset.get(off));
    }

    /** Records a committed segment written by this broker. */
    public synchronized void record(UUID partitionId, long base, byte[] hashes, UUID[] ids, Instant createdAt) {
        int n = ids.length;
        Block b = blocks.get(partitionId);
        if (b != null && !b.segments.isEmpty() && b.segments.peekLast().end() != base - 1) {
            remove(partitionId); // Not contiguous: another broker wrote in between.
            b = null;
        }
        if (b == null) {
            b = new Block();
            blocks.put(partitionId, b);
        }
        Segment s = new Segment(base, base + n - 1, createdAt.toEpochMilli(), hashes, ids);
        b.segments.addLast(s);
        for (int i = 0; i < n; i++) {
            byte[] h = new byte[16];
            System.arraycopy(hashes, i * 16, h, 0, 16);
            // The lowest offset wins, as in the SQL probe.
            b.offsets.putIfAbsent(ByteBuffer.wrap(h), base + i);
            b.idsByOffset.put(base + i, ids[i]);
        }
        entries += n;
        while (entries > maxEntries && !blocks.isEmpty()) {
            UUID eldest = blocks.keySet().iterator().next();
            if (eldest.equals(partitionId) && blocks.size() == 1) {
                dropOldest(b);
            } else {
                remove(eldest);
            }
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
        while (!b.segments.isEmpty() && b.segments.peekFirst().createdAtMs() < oldest) {
            dropOldest(b);
        }
    }

    private void dropOldest(Block b) {
        Segment s = b.segments.pollFirst();
        if (s == null) {
            return;
        }
        for (int i = 0; i < s.ids().length; i++) {
            long off = s.base() + i;
            ByteBuffer key = ByteBuffer.wrap(s.hashes(), i * 16, 16).slice();
            Long stored = b.offsets.get(key);
            if (stored != null && stored == off) {
                b.offsets.remove(key);
            }
            b.idsByOffset.remove(off);
        }
        entries -= s.ids().length;
    }

    private void remove(UUID partitionId) {
        Block b = blocks.remove(partitionId);
        if (b != null) {
            for (Segment s : b.segments) {
                entries -= s.ids().length;
            }
        }
    }
}
