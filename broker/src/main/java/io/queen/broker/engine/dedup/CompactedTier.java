package io.queen.broker.engine.dedup;

import java.util.ArrayList;
import java.util.List;

/**
 * A block's older offsets as fingerprint {@link Chunk}s, oldest first, at most {@link #MAX_CHUNKS}
 * of them. The block still vouches for them; a hash matching none is new without a probe, and one
 * that matches makes that push probe the rows up to the matching chunk in SQL.
 */
final class CompactedTier {
    /** Chunks per partition; past it two merge, so a lookup tests at most this many. */
    static final int MAX_CHUNKS = 8;

    private final List<Chunk> chunks = new ArrayList<>();

    boolean isEmpty() {
        return chunks.isEmpty();
    }

    int size() {
        return chunks.size();
    }

    Chunk oldest() {
        return chunks.get(0);
    }

    Chunk newest() {
        return chunks.get(chunks.size() - 1);
    }

    void add(Chunk c) {
        chunks.add(c);
    }

    Chunk removeOldest() {
        return chunks.remove(0);
    }

    /** The newest chunk whose fingerprints may hold the hash, or null: a probe must read back to its end. */
    Chunk newestMightContain(long hashHi) {
        for (int i = chunks.size() - 1; i >= 0; i--) {
            Chunk c = chunks.get(i);
            if (c.mightContain(hashHi)) {
                return c;
            }
        }
        return null;
    }

    /**
     * Past {@link #MAX_CHUNKS}, the two adjacent chunks with the fewest messages between them
     * merge (size-tiered): the newest runs, usually the small ones, merge among themselves, so a
     * fingerprint match in them narrows the vouch to a short range, and the large old runs are
     * left to leave with the window. A merged chunk leaves only once its newest message did.
     *
     * @return the change in the chunks' heap (0 when nothing merged)
     */
    long mergeSmallestPair() {
        if (chunks.size() <= MAX_CHUNKS) {
            return 0;
        }
        int best = -1;
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i + 1 < chunks.size(); i++) {
            long n = chunks.get(i).messages + chunks.get(i + 1).messages;
            if (n < fewest && n <= Chunk.MAX_MESSAGES) {
                fewest = n;
                best = i;
            }
        }
        if (best < 0) {
            return 0; // every pair too large to merge: more chunks, and slower lookups, instead
        }
        Chunk older = chunks.get(best);
        Chunk newer = chunks.remove(best + 1);
        Chunk merged = Chunk.merge(older, newer);
        chunks.set(best, merged);
        return merged.bytes() - older.bytes() - newer.bytes();
    }

    long messages() {
        long n = 0;
        for (Chunk c : chunks) {
            n += c.messages;
        }
        return n;
    }

    long bytes() {
        long n = 0;
        for (Chunk c : chunks) {
            n += c.bytes();
        }
        return n;
    }
}
