package io.queen.broker.engine.dedup;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Reads the two big-endian words of a 16-byte transaction hash in place, from an array of
 * concatenated hashes (a segment's sidecar bytes, or one incoming hash), so no hash is copied.
 */
final class HashWords {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private HashWords() {
    }

    /** The first 8 bytes of hash {@code i}. */
    static long hi(byte[] hashes, int i) {
        return (long) LONGS.get(hashes, i * 16);
    }

    /** The last 8 bytes of hash {@code i}. */
    static long lo(byte[] hashes, int i) {
        return (long) LONGS.get(hashes, i * 16 + 8);
    }
}
