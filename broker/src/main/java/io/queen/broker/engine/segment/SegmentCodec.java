package io.queen.broker.engine.segment;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Segment blob codec (broker/DESIGN.md, Storage model): zstd over a concatenation of little-endian frames
 * {@code u32 body_len | u8 flags | 16B message_id | [16B trace_id] | u16 txn_len | txn | [u16 psub_len | psub] | payload}.
 * UUIDs are written in their canonical big-endian byte order.
 */
public final class SegmentCodec {
    static final int FLAG_TRACE_ID = 1;
    static final int FLAG_PRODUCER_SUB = 2;
    static final int FLAG_ENCRYPTED = 4;
    private static final int KNOWN_FLAGS = FLAG_TRACE_ID | FLAG_PRODUCER_SUB | FLAG_ENCRYPTED;

    /** flags + message id + txn_len: the smallest body a writer can produce. */
    static final int MIN_BODY_LEN = 1 + 16 + 2;

    // Largest array the JVM reliably allocates.
    private static final int MAX_RAW_LEN = Integer.MAX_VALUE - 8;

    private SegmentCodec() {
    }

    /** Packs {@code frames} into one zstd-compressed blob. */
    public static byte[] encode(List<Frame> frames, int zstdLevel) {
        int n = frames.size();
        // Strings are encoded once and kept so the write pass is a straight copy.
        byte[][] txns = new byte[n][];
        byte[][] subs = new byte[n][];
        long total = 0;
        for (int i = 0; i < n; i++) {
            Frame f = frames.get(i);
            txns[i] = f.transactionId().getBytes(StandardCharsets.UTF_8);
            subs[i] = f.producerSub() == null ? null : f.producerSub().getBytes(StandardCharsets.UTF_8);
            total += 4L + bodyLength(f, txns[i], subs[i]);
        }
        if (total > MAX_RAW_LEN) {
            throw new IllegalArgumentException("segment of " + total + " bytes exceeds " + MAX_RAW_LEN);
        }
        try (ZstdContexts.Compressor zstd = ZstdContexts.compressor(zstdLevel)) {
            ByteBuffer buf = ByteBuffer.wrap(zstd.input((int) total)).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < n; i++) {
                Frame f = frames.get(i);
                byte[] txn = txns[i];
                byte[] sub = subs[i];
                buf.putInt(bodyLength(f, txn, sub));
                int flags = (f.traceId() != null ? FLAG_TRACE_ID : 0)
                        | (sub != null ? FLAG_PRODUCER_SUB : 0)
                        | (f.encrypted() ? FLAG_ENCRYPTED : 0);
                buf.put((byte) flags);
                putUuid(buf, f.messageId());
                if (f.traceId() != null) {
                    putUuid(buf, f.traceId());
                }
                buf.putShort((short) txn.length).put(txn);
                if (sub != null) {
                    buf.putShort((short) sub.length).put(sub);
                }
                buf.put(f.payload());
            }
            if (buf.position() != total) { // the scratch array may be longer: nothing else would notice
                throw new IllegalStateException("segment frames took " + buf.position() + " of " + total + " bytes");
            }
            return zstd.compress((int) total);
        }
    }

    /** All frames of {@code blob}. */
    public static List<Frame> decode(byte[] blob) {
        return parse(decompress(blob), 0, Integer.MAX_VALUE, true);
    }

    /**
     * Frames {@code [startOff, startOff + take)} of {@code blob}; the others are only length-checked, never copied.
     * A range past the last frame means the blob disagrees with its segment row and is reported as corrupt.
     */
    public static List<Frame> decode(byte[] blob, int startOff, int take) {
        if (startOff < 0 || take < 0) {
            throw new IllegalArgumentException("invalid frame range startOff=" + startOff + " take=" + take);
        }
        if (take == 0) {
            return List.of();
        }
        return parse(decompress(blob), startOff, take, false);
    }

    /** Number of frames in {@code blob} (the whole blob is validated structurally). */
    public static int frameCount(byte[] blob) {
        byte[] raw = decompress(blob);
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        int count = 0;
        for (int pos = 0; pos < raw.length; count++) {
            pos += 4 + checkedBodyLength(buf, pos, count);
        }
        return count;
    }

    private static int bodyLength(Frame f, byte[] txn, byte[] sub) {
        long len = MIN_BODY_LEN + (f.traceId() != null ? 16L : 0L) + txn.length
                + (sub != null ? 2L + sub.length : 0L) + f.payload().length;
        if (len > MAX_RAW_LEN) {
            throw new IllegalArgumentException("frame of " + len + " bytes is too large");
        }
        return (int) len;
    }

    private static List<Frame> parse(byte[] raw, int startOff, int take, boolean all) {
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        long end = all ? Long.MAX_VALUE : (long) startOff + take;
        List<Frame> out = new ArrayList<>(all ? 16 : take);
        int index = 0;
        for (int pos = 0; pos < raw.length; index++) {
            int bodyLen = checkedBodyLength(buf, pos, index);
            if (index >= startOff && index < end) {
                out.add(parseBody(raw, buf, pos + 4, bodyLen, index));
            }
            pos += 4 + bodyLen;
        }
        if (!all && index < end) {
            throw new CorruptSegmentException("segment has " + index + " frames, requested frames ["
                    + startOff + ", " + end + ")");
        }
        return out;
    }

    /** Reads the u32 length at {@code pos} and checks that a whole, minimally sized body follows. */
    private static int checkedBodyLength(ByteBuffer buf, int pos, int index) {
        int remaining = buf.capacity() - pos;
        if (remaining < 4) {
            throw new CorruptSegmentException(remaining + " trailing bytes after frame " + (index - 1)
                    + " at offset " + pos);
        }
        long bodyLen = Integer.toUnsignedLong(buf.getInt(pos));
        if (bodyLen < MIN_BODY_LEN) {
            throw new CorruptSegmentException("frame " + index + " at offset " + pos + " has body length "
                    + bodyLen + ", minimum is " + MIN_BODY_LEN);
        }
        if (bodyLen > remaining - 4) {
            throw new CorruptSegmentException("frame " + index + " at offset " + pos + " is truncated: body length "
                    + bodyLen + ", " + (remaining - 4) + " bytes left");
        }
        return (int) bodyLen;
    }

    private static Frame parseBody(byte[] raw, ByteBuffer buf, int start, int len, int index) {
        int end = start + len;
        int p = start;
        int flags = raw[p++] & 0xFF;
        if ((flags & ~KNOWN_FLAGS) != 0) {
            // An unknown flag may add fields we cannot skip; misparsing would serve garbage.
            throw new CorruptSegmentException("frame " + index + " has unknown flags 0x" + Integer.toHexString(flags));
        }
        UUID messageId = getUuid(buf, p);
        p += 16;
        UUID traceId = null;
        if ((flags & FLAG_TRACE_ID) != 0) {
            require(p, 16, end, index, "trace id");
            traceId = getUuid(buf, p);
            p += 16;
        }
        require(p, 2, end, index, "transaction id length");
        int txnLen = Short.toUnsignedInt(buf.getShort(p));
        p += 2;
        require(p, txnLen, end, index, "transaction id");
        String txn = new String(raw, p, txnLen, StandardCharsets.UTF_8);
        p += txnLen;
        String sub = null;
        if ((flags & FLAG_PRODUCER_SUB) != 0) {
            require(p, 2, end, index, "producer sub length");
            int subLen = Short.toUnsignedInt(buf.getShort(p));
            p += 2;
            require(p, subLen, end, index, "producer sub");
            sub = new String(raw, p, subLen, StandardCharsets.UTF_8);
            p += subLen;
        }
        byte[] payload = Arrays.copyOfRange(raw, p, end);
        return new Frame(messageId, traceId, txn, sub, payload, (flags & FLAG_ENCRYPTED) != 0);
    }

    private static void require(int p, int n, int end, int index, String field) {
        if (end - p < n) {
            throw new CorruptSegmentException("frame " + index + ": " + field + " overruns the frame body");
        }
    }

    // The buffer is little-endian for the length fields; UUIDs are big-endian, hence the byte swap.
    private static void putUuid(ByteBuffer buf, UUID id) {
        buf.putLong(Long.reverseBytes(id.getMostSignificantBits()));
        buf.putLong(Long.reverseBytes(id.getLeastSignificantBits()));
    }

    private static UUID getUuid(ByteBuffer buf, int p) {
        return new UUID(Long.reverseBytes(buf.getLong(p)), Long.reverseBytes(buf.getLong(p + 8)));
    }

    private static byte[] decompress(byte[] blob) {
        if (blob.length == 0) {
            // zstd-jni decodes an empty array to nothing, but no writer produces an empty blob.
            throw new CorruptSegmentException("empty segment blob");
        }
        try {
            long size = Zstd.getFrameContentSize(blob);
            if (size == -1) {
                return decompressStreaming(blob); // content size not recorded in the header
            }
            if (size < 0) {
                throw new CorruptSegmentException("not a zstd frame: " + blob.length + " bytes");
            }
            if (size > MAX_RAW_LEN) {
                throw new CorruptSegmentException("zstd frame declares " + size + " bytes, too large");
            }
            if (Zstd.findFrameCompressedSize(blob) != blob.length) {
                return decompressStreaming(blob); // several zstd frames, or garbage after the first
            }
            byte[] raw = ZstdContexts.decompress(blob, (int) size);
            if (raw.length != size) {
                throw new CorruptSegmentException("zstd frame declares " + size + " bytes but holds " + raw.length);
            }
            return raw;
        } catch (CorruptSegmentException e) {
            throw e;
        } catch (ZstdException e) {
            throw new CorruptSegmentException("bad zstd data: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // zstd-jni reports some malformed headers as index errors.
            throw new CorruptSegmentException("bad zstd data: " + e, e);
        }
    }

    private static byte[] decompressStreaming(byte[] blob) {
        try (var in = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(blob))) {
            return in.readAllBytes();
        } catch (IOException | RuntimeException e) {
            throw new CorruptSegmentException("bad zstd data: " + e.getMessage(), e);
        }
    }
}
