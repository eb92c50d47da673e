package io.queen.broker.engine.segment;

import net.openhft.hashing.LongTupleHashFunction;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

/**
 * Dedup/ack key of a message (broker/DESIGN.md, Storage model): XXH3-128, seeded with 0, of the transactionId's UTF-8
 * bytes in the canonical big-endian form (high 64 bits first), so stored {@code log_txns.hashes} match the other
 * broker implementations.
 */
public final class TxnHash {
    public static final int LENGTH = 16;

    private static final LongTupleHashFunction XXH3_128 = LongTupleHashFunction.xx128();

    private TxnHash() {
    }

    /** The 16-byte hash of {@code transactionId}. */
    public static byte[] of(String transactionId) {
        byte[] out = new byte[LENGTH];
        write(transactionId, out, 0, new long[2]);
        return out;
    }

    /** The hashes of {@code transactionIds}, concatenated in order (16 bytes each). */
    public static byte[] concat(List<String> transactionIds) {
        byte[] out = new byte[LENGTH * transactionIds.size()];
        long[] h = new long[2];
        for (int i = 0; i < transactionIds.size(); i++) {
            write(transactionIds.get(i), out, i * LENGTH, h);
        }
        return out;
    }

    /** Lower-case hex, for logs. */
    public static String hex(byte[] hash) {
        return HexFormat.of().formatHex(hash);
    }

    private static void write(String transactionId, byte[] out, int off, long[] h) {
        // zero-allocation-hashing returns {low64, high64}; the canonical form puts high64 first.
        XXH3_128.hashBytes(transactionId.getBytes(StandardCharsets.UTF_8), h);
        putLongBigEndian(out, off, h[1]);
        putLongBigEndian(out, off + 8, h[0]);
    }

    private static void putLongBigEndian(byte[] out, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            out[off + i] = (byte) v;
            v >>>= 8;
        }
    }
}
