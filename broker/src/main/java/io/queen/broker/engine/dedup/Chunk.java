package io.queen.broker.engine.dedup;

import java.util.List;

/**
 * The 32-bit fingerprints (first 4 bytes of each hash; 0 stored as 1, which can only add a false
 * match) of the compacted offsets [from, to], in an open-addressing set of ints at a load of at most
 * 2/3: 6-12 bytes a message against about 100 exact. A fingerprint proves nothing: a match only makes
 * the push probe the chunk's rows in SQL, so a collision (about {@code messages / 2^32} a lookup)
 * costs a probe and never a message. It leaves whole, once its newest message left the window.
 */
final class Chunk {
    /** Messages per chunk at most, so its table (a power of two, at most 2/3 full) fits an array. */
    static final long MAX_MESSAGES = 1L << 28;

    final long from;
    final long to;
    final long newestCreatedAtMs;
    final long messages;
    private final int[] slots;

    private Chunk(long from, long to, long newestCreatedAtMs, long messages) {
        this.from = from;
        this.to = to;
        this.newestCreatedAtMs = newestCreatedAtMs;
        this.messages = messages;
        this.slots = new int[capacityFor(messages)];
    }

    /** One chunk for consecutive segments, oldest first. */
    static Chunk of(List<Segment> segments) {
        long n = 0;
        for (Segment s : segments) {
            n += s.messages();
        }
        Segment newest = segments.get(segments.size() - 1);
        Chunk c = new Chunk(segments.get(0).base(), newest.end(), newest.createdAtMs(), n);
        for (Segment s : segments) {
            for (int i = 0; i < s.messages(); i++) {
                c.add(HashWords.hi(s.hashes(), i));
            }
        }
        return c;
    }

    /** One chunk for two adjacent ones, {@code older} first. */
    static Chunk merge(Chunk older, Chunk newer) {
        Chunk c = new Chunk(older.from, newer.to, newer.newestCreatedAtMs, older.messages + newer.messages);
        for (Chunk part : List.of(older, newer)) {
            for (int fp : part.slots) {
                if (fp != 0) {
                    c.addFingerprint(fp);
                }
            }
        }
        return c;
    }

    /** The fingerprint of a hash (its first 8 bytes as {@code hashHi}): the top 32 bits, never 0. */
    static int fingerprint(long hashHi) {
        int fp = (int) (hashHi >>> 32);
        return fp == 0 ? 1 : fp;
    }

    boolean mightContain(long hashHi) {
        int fp = fingerprint(hashHi);
        int mask = slots.length - 1;
        for (int i = slot(fp, mask); slots[i] != 0; i = (i + 1) & mask) {
            if (slots[i] == fp) {
                return true;
            }
        }
        return false;
    }

    long bytes() {
        return 4L * slots.length + 64;
    }

    private void add(long hashHi) {
        addFingerprint(fingerprint(hashHi));
    }

    private void addFingerprint(int fp) {
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

    private static int slot(int fp, int mask) {
        int h = fp * 0x9E3779B9;
        return (h ^ h >>> 16) & mask;
    }
}
