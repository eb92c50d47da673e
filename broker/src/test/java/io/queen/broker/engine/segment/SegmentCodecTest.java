package io.queen.broker.engine.segment;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SegmentCodecTest {

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<Frame> sampleFrames() {
        return List.of(
                new Frame(UuidV7.next(), null, "t1", null, json("{\"a\":1}"), false),
                new Frame(UuidV7.next(), UUID.randomUUID(), "t2", null, json("[1,2,3]"), false),
                new Frame(UuidV7.next(), null, "t3", "user-42", json("\"text\""), false),
                new Frame(UuidV7.next(), UUID.randomUUID(), "t4", "svc", json("{\"encrypted\":\"x\"}"), true),
                new Frame(UuidV7.next(), null, "t5", null, new byte[0], false),
                new Frame(UuidV7.next(), null, "", "", new byte[0], true),
                new Frame(UuidV7.next(), null, "tx-é-日本-😀", "sub-ü", json("{\"k\":\"日本\"}"), false));
    }

    private static List<Frame> numbered(int n) {
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            frames.add(new Frame(UuidV7.next(), null, "txn-" + i, null, json("{\"i\":" + i + "}"), false));
        }
        return frames;
    }

    @Test
    void concurrentEncodersAndDecodersSharingPooledContextsNeverMixUpSegments() throws Exception {
        // More concurrent callers than the pool keeps idle, on virtual threads as in the broker.
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 48; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        String body = "{\"thread\":" + thread + ",\"i\":" + i + ",\"pad\":\"" + "x".repeat(i * 37) + "\"}";
                        Frame f = new Frame(UuidV7.next(), null, "t" + thread + "-" + i, null, json(body), false);
                        byte[] blob = SegmentCodec.encode(List.of(f), 3);
                        Frame back = SegmentCodec.decode(blob).get(0);
                        assertEquals(body, new String(back.payload(), StandardCharsets.UTF_8));
                        assertEquals(f.transactionId(), back.transactionId());
                    }
                    return null;
                }));
            }
            for (var f : done) {
                f.get();
            }
        }
        assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(new byte[] {40, -75, 47, -3, 0, 1, 2}));
        // A failed decode does not poison the pool: later calls still round-trip.
        Frame f = new Frame(UuidV7.next(), null, "after", null, json("{\"ok\":true}"), false);
        assertEquals("after", SegmentCodec.decode(SegmentCodec.encode(List.of(f), 3)).get(0).transactionId());
    }

    @Test
    void roundTrip() {
        List<Frame> frames = sampleFrames();
        byte[] blob = SegmentCodec.encode(frames, 3);
        assertEquals(frames, SegmentCodec.decode(blob));
        assertEquals(frames.size(), SegmentCodec.frameCount(blob));
        assertTrue(SegmentCodec.decode(blob).get(4).isNullPayload());
    }

    @Test
    void roundTripManyKilobyteMessages() {
        Random rnd = new Random(1);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            byte[] payload = new byte[1024];
            for (int j = 0; j < payload.length; j++) {
                payload[j] = (byte) ('a' + rnd.nextInt(26));
            }
            payload[0] = '"';
            payload[payload.length - 1] = '"';
            frames.add(new Frame(UuidV7.next(), null, "txn-" + i, null, payload, false));
        }
        for (int level : new int[] {-1, 1, 3, 9}) {
            assertEquals(frames, SegmentCodec.decode(SegmentCodec.encode(frames, level)));
        }
    }

    @Test
    void aSegmentCarriesNothingOfTheOneEncodedBeforeItInTheSameScratch() {
        // One thread: the pool hands the same compressor back each time. Large (past what a
        // compressor keeps), then larger than the next, then small: each blob holds its own frames only.
        List<Frame> huge = numbered(40_000);
        List<Frame> medium = numbered(300);
        List<Frame> small = numbered(2);
        for (List<Frame> frames : List.of(huge, medium, small, medium, small)) {
            byte[] blob = SegmentCodec.encode(frames, 3);
            assertEquals(frames, SegmentCodec.decode(blob));
            assertEquals(frames.size(), SegmentCodec.frameCount(blob));
        }
        assertTrue(SegmentCodec.encode(small, 3).length < 200, "a two-frame blob is not padded with scratch bytes");
    }

    @Test
    void emptySegment() {
        byte[] blob = SegmentCodec.encode(List.of(), 1);
        assertEquals(List.of(), SegmentCodec.decode(blob));
        assertEquals(0, SegmentCodec.frameCount(blob));
    }

    @Test
    void decodeRange() {
        List<Frame> frames = numbered(10);
        byte[] blob = SegmentCodec.encode(frames, 1);
        assertEquals(frames.subList(3, 7), SegmentCodec.decode(blob, 3, 4));
        assertEquals(frames.subList(0, 10), SegmentCodec.decode(blob, 0, 10));
        assertEquals(frames.subList(9, 10), SegmentCodec.decode(blob, 9, 1));
        assertEquals(List.of(), SegmentCodec.decode(blob, 5, 0));
        assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob, 8, 3));
        assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob, 10, 1));
        assertThrows(IllegalArgumentException.class, () -> SegmentCodec.decode(blob, -1, 2));
        assertThrows(IllegalArgumentException.class, () -> SegmentCodec.decode(blob, 0, -2));
    }

    @Test
    void exactByteLayout() {
        Frame f = new Frame(UUID.fromString("00112233-4455-6677-8899-aabbccddeeff"),
                UUID.fromString("01020304-0506-0708-090a-0b0c0d0e0f10"), "tx", "ab", json("{}"), true);
        byte[] raw = Zstd.decompress(SegmentCodec.encode(List.of(f), 3), 1000);
        String expected = "2b000000"                     // body_len 43, little-endian
                + "07"                                   // flags: trace | producerSub | encrypted
                + "00112233445566778899aabbccddeeff"     // message id, big-endian
                + "0102030405060708090a0b0c0d0e0f10"     // trace id
                + "0200" + "7478"                        // txn_len 2, "tx"
                + "0200" + "6162"                        // psub_len 2, "ab"
                + "7b7d";                                // payload "{}"
        assertEquals(expected, HexFormat.of().formatHex(raw));

        Frame minimal = new Frame(new UUID(0, 1), null, "", null, new byte[0], false);
        raw = Zstd.decompress(SegmentCodec.encode(List.of(minimal), 3), 1000);
        assertEquals("13000000" + "00" + "00000000000000000000000000000001" + "0000",
                HexFormat.of().formatHex(raw));
    }

    @Test
    void decodesHandBuiltFrames() {
        byte[] raw = HexFormat.of().parseHex("18000000" + "00" + "00000000000000000000000000000002"
                + "0100" + "78" + "6e756c6c"); // txn "x", payload "null"
        List<Frame> frames = SegmentCodec.decode(Zstd.compress(raw, 1));
        assertEquals(List.of(new Frame(new UUID(0, 2), null, "x", null, json("null"), false)), frames);
    }

    @Test
    void decodesStreamedAndMultiFrameZstd() throws Exception {
        List<Frame> frames = numbered(5);
        byte[] raw = Zstd.decompress(SegmentCodec.encode(frames, 1), 100_000);

        // Streaming writers do not record the content size in the header.
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (ZstdOutputStream out = new ZstdOutputStream(bos)) {
            out.write(raw);
        }
        assertEquals(frames, SegmentCodec.decode(bos.toByteArray()));

        // Two zstd frames back to back, splitting the frame stream at an arbitrary byte.
        byte[] a = Zstd.compress(Arrays.copyOfRange(raw, 0, 30), 1);
        byte[] b = Zstd.compress(Arrays.copyOfRange(raw, 30, raw.length), 1);
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        assertEquals(frames, SegmentCodec.decode(both));
    }

    @Test
    void randomBytesAreCorrupt() {
        Random rnd = new Random(42);
        for (int i = 0; i < 500; i++) {
            byte[] junk = new byte[rnd.nextInt(200)];
            rnd.nextBytes(junk);
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(junk));
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.frameCount(junk));
        }
    }

    @Test
    void truncatedOrExtendedZstdIsCorrupt() {
        byte[] blob = SegmentCodec.encode(numbered(20), 3);
        for (int cut = 1; cut < blob.length; cut++) {
            byte[] truncated = Arrays.copyOf(blob, blob.length - cut);
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(truncated), "cut " + cut);
        }
        byte[] extended = Arrays.copyOf(blob, blob.length + 3);
        assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(extended));
    }

    @Test
    void truncatedFrameIsCorrupt() {
        byte[] raw = rawOf(numbered(3));
        for (int cut = 1; cut < 20; cut++) {
            byte[] blob = Zstd.compress(Arrays.copyOf(raw, raw.length - cut), 1);
            CorruptSegmentException e = assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob));
            assertTrue(e.getMessage().contains("truncated") || e.getMessage().contains("trailing"), e.getMessage());
        }
    }

    @Test
    void trailingGarbageIsCorrupt() {
        byte[] raw = rawOf(numbered(3));
        for (int extra = 1; extra <= 40; extra++) {
            byte[] withJunk = Arrays.copyOf(raw, raw.length + extra);
            Arrays.fill(withJunk, raw.length, withJunk.length, (byte) 0x5a);
            byte[] blob = Zstd.compress(withJunk, 1);
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob), "extra " + extra);
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.frameCount(blob), "extra " + extra);
            assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob, 0, 1), "extra " + extra);
        }
    }

    @Test
    void bodyTooShortIsCorrupt() {
        byte[] raw = ByteBuffer.allocate(4 + 18).order(ByteOrder.LITTLE_ENDIAN).putInt(18).array();
        CorruptSegmentException e = assertThrows(CorruptSegmentException.class,
                () -> SegmentCodec.decode(Zstd.compress(raw, 1)));
        assertTrue(e.getMessage().contains("minimum is 19"), e.getMessage());
    }

    @Test
    void fieldsOverrunningTheBodyAreCorrupt() {
        // flags=1 (trace id) but only the 19-byte minimum body.
        assertCorrupt("13000000" + "01" + "00".repeat(16) + "0000", "trace id");
        // txn_len 5 with 2 bytes left.
        assertCorrupt("15000000" + "00" + "00".repeat(16) + "0500" + "6162", "transaction id");
        // producer sub flag without room for its length.
        assertCorrupt("13000000" + "02" + "00".repeat(16) + "0000", "producer sub");
        // producer sub length past the body.
        assertCorrupt("16000000" + "02" + "00".repeat(16) + "0000" + "0900" + "61", "producer sub");
        // unknown flag bit.
        assertCorrupt("13000000" + "08" + "00".repeat(16) + "0000", "unknown flags");
    }

    @Test
    void emptyBlobIsCorrupt() {
        assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(new byte[0]));
    }

    private static void assertCorrupt(String rawHex, String messagePart) {
        byte[] blob = Zstd.compress(HexFormat.of().parseHex(rawHex), 1);
        CorruptSegmentException e = assertThrows(CorruptSegmentException.class, () -> SegmentCodec.decode(blob));
        assertTrue(e.getMessage().contains(messagePart), e.getMessage());
    }

    private static byte[] rawOf(List<Frame> frames) {
        byte[] blob = SegmentCodec.encode(frames, 1);
        return Zstd.decompress(blob, (int) Zstd.getFrameContentSize(blob));
    }
}
