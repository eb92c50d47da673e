package io.queen.broker.engine.spool;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The format of one push-spool file: an 8-byte header, then records
 * {@code [int body length][int CRC-32C of body][body]}, big-endian. A body is one spooled push item:
 * its tenant, the message id answered to the client, queue, partition, transaction id, optional
 * trace id, optional producer subject and the payload bytes exactly as the push path stores them.
 * A body starts with its version: 1 has no producer subject, 2 adds it after the trace id. A
 * record without a subject is still written as version 1, so a broker from before version 2
 * replays what it can read.
 *
 * <p>Records are appended and fsynced before the push is answered, so after a crash only the last
 * record can be incomplete, and that record was never acknowledged: the reader stops there without
 * failing ({@link Ending#TORN_TAIL}). A bad record followed by more bytes is real corruption
 * ({@link Ending#CORRUPT}); the reader stops there too, and the caller keeps the file for a human.
 */
public final class SpoolFile {
    static final byte[] HEADER = "QSPOOL1\n".getBytes(StandardCharsets.US_ASCII);
    /** Far above the largest push body (QUEEN_MAX_BODY_BYTES is at most 2 GiB - 1); anything larger is garbage. */
    private static final int MAX_BODY = Integer.MAX_VALUE - 64;
    private static final byte BODY_VERSION = 1;
    private static final byte BODY_VERSION_WITH_SUBJECT = 2;

    /** One spooled push item. */
    public record Entry(UUID tenant, UUID messageId, String queue, String partition, String transactionId, UUID traceId,
                 String producerSub, byte[] payload) {
    }

    /** How reading a file ended. */
    enum Ending { CLEAN, TORN_TAIL, CORRUPT, NOT_A_SPOOL_FILE }

    private SpoolFile() {
    }

    /** The framed record (length, checksum, body) of one entry. */
    public static byte[] encode(Entry e) {
        ByteArrayOutputStream body = new ByteArrayOutputStream(96 + e.payload().length);
        try (DataOutputStream out = new DataOutputStream(body)) {
            out.writeByte(e.producerSub() == null ? BODY_VERSION : BODY_VERSION_WITH_SUBJECT);
            writeUuid(out, e.tenant());
            writeUuid(out, e.messageId());
            writeText(out, e.queue());
            writeText(out, e.partition());
            writeText(out, e.transactionId());
            out.writeBoolean(e.traceId() != null);
            if (e.traceId() != null) {
                writeUuid(out, e.traceId());
            }
            if (e.producerSub() != null) {
                writeText(out, e.producerSub());
            }
            out.writeInt(e.payload().length);
            out.write(e.payload());
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        }
        byte[] b = body.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(b);
        return ByteBuffer.allocate(8 + b.length).putInt(b.length).putInt((int) crc.getValue()).put(b).array();
    }

    /** Reads the entries of one file in order; stops at the first record it cannot trust. */
    public static final class Reader implements AutoCloseable {
        private final DataInputStream in;
        private final long size;
        private long position;
        private Ending ending;

        public Reader(Path file) throws IOException {
            this.size = Files.size(file);
            InputStream raw = Files.newInputStream(file);
            this.in = new DataInputStream(new BufferedInputStream(raw, 64 * 1024));
            byte[] header = new byte[HEADER.length];
            int n = in.readNBytes(header, 0, header.length);
            position = n;
            if (n < HEADER.length) {
                // A crash right after the file was created: a prefix of the header, or nothing.
                ending = Arrays.equals(header, 0, n, HEADER, 0, n) ? Ending.TORN_TAIL : Ending.NOT_A_SPOOL_FILE;
            } else if (!Arrays.equals(header, HEADER)) {
                ending = Ending.NOT_A_SPOOL_FILE;
            }
        }

        /** The next entry, or null at the end (then {@link #ending()} says why). */
        public Entry next() throws IOException {
            if (ending != null) {
                return null;
            }
            if (position == size) {
                ending = Ending.CLEAN;
                return null;
            }
            long start = position;
            if (size - start < 8) {
                ending = Ending.TORN_TAIL;
                return null;
            }
            int length = in.readInt();
            int checksum = in.readInt();
            position += 8;
            if (length < 1 || length > MAX_BODY) {
                ending = restIsZero() ? Ending.TORN_TAIL : Ending.CORRUPT;
                return null;
            }
            if (size - position < length) {
                // Shorter than announced: only the last append can be cut off like this.
                ending = Ending.TORN_TAIL;
                return null;
            }
            byte[] body = in.readNBytes(length);
            position += length;
            if (body.length < length) {
                ending = Ending.TORN_TAIL;
                return null;
            }
            CRC32C crc = new CRC32C();
            crc.update(body);
            if ((int) crc.getValue() != checksum) {
                ending = position == size || restIsZero() ? Ending.TORN_TAIL : Ending.CORRUPT;
                return null;
            }
            try {
                return decode(body);
            } catch (IOException | RuntimeException e) {
                ending = Ending.CORRUPT;
                return null;
            }
        }

        Ending ending() {
            return ending;
        }

        /**
         * True when nothing but zero bytes follows: a file system may extend a file before the data of
         * its last write lands, so a crash can leave a zero-filled tail after the last good record.
         */
        private boolean restIsZero() throws IOException {
            byte[] chunk = new byte[64 * 1024];
            int n;
            while ((n = in.read(chunk)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (chunk[i] != 0) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** Bytes read so far: where a torn or corrupt record starts once reading has stopped. */
        long position() {
            return position;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    private static Entry decode(byte[] body) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(body));
        byte version = in.readByte();
        if (version != BODY_VERSION && version != BODY_VERSION_WITH_SUBJECT) {
            throw new IOException("unknown spool record version");
        }
        UUID tenant = readUuid(in);
        UUID messageId = readUuid(in);
        String queue = readText(in);
        String partition = readText(in);
        String txn = readText(in);
        UUID trace = in.readBoolean() ? readUuid(in) : null;
        String producerSub = version == BODY_VERSION_WITH_SUBJECT ? readText(in) : null;
        int payloadLength = in.readInt();
        if (payloadLength < 0 || payloadLength > in.available()) {
            throw new EOFException("payload longer than its record");
        }
        byte[] payload = in.readNBytes(payloadLength);
        if (in.available() != 0) {
            throw new IOException("trailing bytes in a spool record");
        }
        return new Entry(tenant, messageId, queue, partition, txn, trace, producerSub, payload);
    }

    private static void writeUuid(DataOutputStream out, UUID id) throws IOException {
        out.writeLong(id.getMostSignificantBits());
        out.writeLong(id.getLeastSignificantBits());
    }

    private static UUID readUuid(DataInputStream in) throws IOException {
        return new UUID(in.readLong(), in.readLong());
    }

    private static void writeText(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String readText(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > in.available()) {
            throw new EOFException("text longer than its record");
        }
        return new String(in.readNBytes(n), StandardCharsets.UTF_8);
    }
}
