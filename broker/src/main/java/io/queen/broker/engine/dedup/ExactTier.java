package io.queen.broker.engine.dedup;

import java.util.ArrayList;
import java.util.List;

/**
 * A block's recent segments, held exactly (oldest first), and the index of their hashes: a hash
 * found here is a duplicate answered from memory, with its offset and message id.
 */
final class ExactTier {
    private final List<Segment> segments = new ArrayList<>();
    /** Segments before this index have been dropped (compacted away in bulk). */
    private int first;
    private final HashIndex index = new HashIndex();

    boolean isEmpty() {
        return first == segments.size();
    }

    int count() {
        return segments.size() - first;
    }

    Segment oldest() {
        return segments.get(first);
    }

    Segment newest() {
        return segments.get(segments.size() - 1);
    }

    /** Appends the block's next segment and indexes its hashes. */
    void add(Segment s) {
        segments.add(s);
        byte[] h = s.hashes();
        for (int i = 0; i < s.messages(); i++) {
            // The lowest offset wins, as in the SQL probe.
            index.putIfAbsent(HashWords.hi(h, i), HashWords.lo(h, i), s.base() + i);
        }
    }

    /** Takes the oldest segment out, and its hashes out of the index. */
    Segment removeOldest() {
        Segment s = segments.set(first++, null);
        if (first == segments.size()) {
            segments.clear();
            first = 0;
        } else if (first >= 1024 && first * 2 >= segments.size()) {
            segments.subList(0, first).clear();
            first = 0;
        }
        byte[] h = s.hashes();
        for (int i = 0; i < s.messages(); i++) {
            index.remove(HashWords.hi(h, i), HashWords.lo(h, i), s.base() + i);
        }
        return s;
    }

    /** The offset stored for the hash, or -1. */
    long offsetOf(long hi, long lo) {
        return index.get(hi, lo);
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
