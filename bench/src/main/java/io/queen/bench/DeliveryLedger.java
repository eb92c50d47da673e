package io.queen.bench;

import java.util.BitSet;

/**
 * Which messages of a run ({@code seq} in [first, first + count)) have been delivered, so repeated
 * deliveries are counted apart and a run ends when every message arrived once.
 */
final class DeliveryLedger {
    private final long first;
    private final long count;
    private final BitSet seen;
    private long unique;
    private long repeats;

    DeliveryLedger(long first, long count) {
        if (count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too many messages for one run: " + count);
        }
        this.first = first;
        this.count = count;
        this.seen = new BitSet((int) count);
    }

    /** Records one delivery; true when it is the first of this message. */
    synchronized boolean record(long seq) {
        long i = seq - first;
        if (i < 0 || i >= count) {
            repeats++; // not a message of this run: a leftover, counted as a repeat
            return false;
        }
        if (seen.get((int) i)) {
            repeats++;
            return false;
        }
        seen.set((int) i);
        unique++;
        return true;
    }

    synchronized long unique() {
        return unique;
    }

    synchronized long repeats() {
        return repeats;
    }

    synchronized boolean complete() {
        return unique == count;
    }
}
