package io.queen.broker.engine.dedup;

import java.util.UUID;

/**
 * One committed segment this broker wrote, held exactly: its offsets, when it was written, its
 * hashes (16 bytes a message, as the sidecar has them) and its message ids. {@code idBits}: message
 * i's id is (idBits[2i], idBits[2i + 1]), most then least significant bits. An array of UUID objects
 * was 100 objects a segment that lived for the window, and G1 copying them was part of its 11% of
 * the broker's push CPU.
 */
record Segment(long base, long end, long createdAtMs, byte[] hashes, long[] idBits) {

    static Segment of(long base, byte[] hashes, UUID[] ids, long createdAtMs) {
        int n = ids.length;
        long[] idBits = new long[2 * n];
        for (int i = 0; i < n; i++) {
            idBits[2 * i] = ids[i].getMostSignificantBits();
            idBits[2 * i + 1] = ids[i].getLeastSignificantBits();
        }
        return new Segment(base, base + n - 1, createdAtMs, hashes, idBits);
    }

    int messages() {
        return idBits.length / 2;
    }

    UUID id(long offset) {
        int i = (int) (offset - base) * 2;
        return new UUID(idBits[i], idBits[i + 1]);
    }
}
