package io.queen.broker.engine.dedup;

import java.util.Arrays;

/**
 * 16-byte hash to offset, open addressing with linear probing in three parallel long arrays
 * (load at most 1/2), deletion by backward shift so no tombstones accumulate. An offset of -1
 * marks an empty slot (offsets are never negative).
 *
 * <p>Every pushed message passes through here and stays for the dedup window, so an entry is three
 * longs and no object: a map of boxed keys cost ~180 bytes and five objects per message, objects
 * every young collection had to copy.
 */
final class HashIndex {
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
