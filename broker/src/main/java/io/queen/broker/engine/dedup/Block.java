package io.queen.broker.engine.dedup;

import java.util.ArrayList;
import java.util.List;

/**
 * One partition's contiguous block of offsets written by this broker: the compacted tier (older
 * runs as fingerprints), then the exact tier (recent segments). Every change to its content is
 * counted in the cache's {@link Usage} here, and only here.
 */
final class Block {
    /** Entries older than window minus this margin are not trusted as duplicates (clock skew with PostgreSQL). */
    static final long MARGIN_MS = 2_000;

    private final Usage usage;
    private final CompactedTier compacted = new CompactedTier();
    private final ExactTier exact = new ExactTier();

    Block(Usage usage) {
        this.usage = usage;
    }

    boolean isEmpty() {
        return compacted.isEmpty() && exact.isEmpty();
    }

    long from() {
        return compacted.isEmpty() ? exact.oldest().base() : compacted.oldest().from;
    }

    long end() {
        return exact.isEmpty() ? compacted.newest().to : exact.newest().end();
    }

    /** The compacted runs. */
    int chunks() {
        return compacted.size();
    }

    /** Appends a committed segment that follows {@link #end()} (or starts the block). */
    void add(Segment s) {
        exact.add(s);
        usage.addExact(s.messages());
    }

    /**
     * What the block knows of an incoming hash: where it is stored ({@link DedupCache.Hit}), that
     * a compacted run may hold it ({@link DedupCache.Maybe}, the newest such run), or nothing (null).
     */
    DedupCache.Found find(byte[] hash) {
        long hi = HashWords.hi(hash, 0);
        // Newest chunk first: a Maybe must say how far back the probe has to read.
        Chunk c = compacted.newestMightContain(hi);
        if (c != null) {
            // Also when the exact tier holds it: SQL answers with the lowest offset, as it would without a cache.
            return new DedupCache.Maybe(c.to);
        }
        long off = exact.offsetOf(hi, HashWords.lo(hash, 0));
        Segment s = off < 0 ? null : exact.covering(off);
        return s == null ? null : new DedupCache.Hit(off, s.id(off));
    }

    /** Drops what left a window of {@code windowSeconds} (less {@link #MARGIN_MS}) at {@code nowMs}. */
    void expire(int windowSeconds, long nowMs) {
        long oldest = nowMs - windowSeconds * 1000L + MARGIN_MS;
        while (!compacted.isEmpty() && compacted.oldest().newestCreatedAtMs < oldest) {
            dropOldest();
        }
        // Chunks hold older messages than any exact segment: with one left, no segment is old enough.
        while (compacted.isEmpty() && !exact.isEmpty() && exact.oldest().createdAtMs() < oldest) {
            dropOldest();
        }
    }

    /** Drops the oldest chunk, or the oldest segment when no chunk is left. */
    void dropOldest() {
        if (!compacted.isEmpty()) {
            Chunk c = compacted.removeOldest();
            usage.addCompacted(-c.messages, -c.bytes());
        } else if (!exact.isEmpty()) {
            dropOldestSegment();
        }
    }

    /** True when {@link #compact()} has something to do: it keeps the newest segment exact. */
    boolean compactable() {
        return exact.count() > 1;
    }

    /**
     * All but the newest exact segment become one chunk (a client's retry of its last push is the
     * likeliest duplicate, so that one stays exact), merged into another when too many.
     */
    void compact() {
        List<Segment> run = new ArrayList<>();
        long messages = 0;
        while (exact.count() > 1) {
            if (messages + exact.oldest().messages() > Chunk.MAX_MESSAGES) {
                addChunk(Chunk.of(run));
                run = new ArrayList<>();
                messages = 0;
            }
            Segment s = dropOldestSegment();
            messages += s.messages();
            run.add(s);
        }
        addChunk(Chunk.of(run));
        usage.addCompacted(0, compacted.mergeSmallestPair());
    }

    /** Takes the whole block out of the usage: it is no longer held. */
    void release() {
        usage.addExact(-exact.messages());
        usage.addCompacted(-compacted.messages(), -compacted.bytes());
    }

    private void addChunk(Chunk c) {
        compacted.add(c);
        usage.addCompacted(c.messages, c.bytes());
    }

    private Segment dropOldestSegment() {
        Segment s = exact.removeOldest();
        usage.addExact(-s.messages());
        return s;
    }
}
