package io.queen.broker.engine.dedup;

import java.util.Arrays;
import java.util.List;

/**
 * The 32-bit fingerprints (first 4 bytes of each hash; 0 stored as 1, which can only add a false
 * match) of the compacted offsets [from, to], sorted and without repeats: at most 4 bytes a message
 * against about 100 exact, looked up by binary search. A chunk never changes once built (compaction
 * builds it whole, a merge builds a new one), so a sorted array costs nothing a hash table would
 * save, and holds 1.5 to 3 times as many messages in the same heap as the table at 2/3 load it
 * replaced. A fingerprint proves nothing: a match only makes the push probe the chunk's rows in SQL,
 * so a collision (about {@code messages / 2^32} a lookup) costs a probe and never a message. It
 * leaves whole, once its newest message left the window.
 */
final class Chunk {
    /** Messages per chunk at most, so its fingerprints fit one array. */
    static final long MAX_MESSAGES = 1L << 28;

    /** Heap of a chunk besides its fingerprints: this object and the array's header. */
    private static final long OVERHEAD_BYTES = 64;

    final long from;
    final long to;
    final long newestCreatedAtMs;
    final long messages;
    private final int[] fingerprints;

    private Chunk(long from, long to, long newestCreatedAtMs, long messages, int[] sortedUnique) {
        this.from = from;
        this.to = to;
        this.newestCreatedAtMs = newestCreatedAtMs;
        this.messages = messages;
        this.fingerprints = sortedUnique;
    }

    /** One chunk for consecutive segments, oldest first. */
    static Chunk of(List<Segment> segments) {
        long n = 0;
        for (Segment s : segments) {
            n += s.messages();
        }
        int[] fps = new int[Math.toIntExact(n)];
        int k = 0;
        for (Segment s : segments) {
            for (int i = 0; i < s.messages(); i++) {
                fps[k++] = fingerprint(HashWords.hi(s.hashes(), i));
            }
        }
        Arrays.sort(fps);
        Segment newest = segments.get(segments.size() - 1);
        return new Chunk(segments.get(0).base(), newest.end(), newest.createdAtMs(), n, unique(fps));
    }

    /** One chunk for two adjacent ones, {@code older} first: a merge of two sorted arrays. */
    static Chunk merge(Chunk older, Chunk newer) {
        int[] a = older.fingerprints;
        int[] b = newer.fingerprints;
        int[] out = new int[a.length + b.length];
        int i = 0;
        int j = 0;
        for (int k = 0; k < out.length; k++) {
            out[k] = j == b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
        }
        return new Chunk(older.from, newer.to, newer.newestCreatedAtMs, older.messages + newer.messages,
                unique(out));
    }

    /** The fingerprint of a hash (its first 8 bytes as {@code hashHi}): the top 32 bits, never 0. */
    static int fingerprint(long hashHi) {
        int fp = (int) (hashHi >>> 32);
        return fp == 0 ? 1 : fp;
    }

    boolean mightContain(long hashHi) {
        return Arrays.binarySearch(fingerprints, fingerprint(hashHi)) >= 0;
    }

    long bytes() {
        return 4L * fingerprints.length + OVERHEAD_BYTES;
    }

    /** {@code sorted} without repeats, copied only when it had some. */
    private static int[] unique(int[] sorted) {
        int k = 0;
        for (int fp : sorted) {
            if (k == 0 || sorted[k - 1] != fp) {
                sorted[k++] = fp;
            }
        }
        return k == sorted.length ? sorted : Arrays.copyOf(sorted, k);
    }
}
