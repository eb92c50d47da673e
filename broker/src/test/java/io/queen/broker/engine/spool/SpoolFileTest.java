package io.queen.broker.engine.spool;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class SpoolFileTest {
    @TempDir
    Path dir;

    static SpoolFile.Entry entry(int n) {
        return new SpoolFile.Entry(UUID.randomUUID(), UUID.randomUUID(), "orders", "eu-" + n, "txn-" + n,
                n % 2 == 0 ? null : UUID.randomUUID(), n % 3 == 0 ? "producer-" + n : null, ("{\"n\":" + n + ",\"s\":\"é€\"}").getBytes(StandardCharsets.UTF_8));
    }

    private Path write(List<SpoolFile.Entry> entries, byte[] tail) throws IOException {
        Path f = dir.resolve("spool-test.log");
        Files.write(f, SpoolFile.HEADER);
        for (SpoolFile.Entry e : entries) {
            Files.write(f, SpoolFile.encode(e), StandardOpenOption.APPEND);
        }
        Files.write(f, tail, StandardOpenOption.APPEND);
        return f;
    }

    private static List<SpoolFile.Entry> readAll(Path f, SpoolFile.Ending expected) throws IOException {
        List<SpoolFile.Entry> out = new ArrayList<>();
        try (SpoolFile.Reader r = new SpoolFile.Reader(f)) {
            SpoolFile.Entry e;
            while ((e = r.next()) != null) {
                out.add(e);
            }
            assertEquals(expected, r.ending());
            assertNull(r.next(), "a finished reader stays finished");
        }
        return out;
    }

    private static void assertSame(SpoolFile.Entry want, SpoolFile.Entry got) {
        assertEquals(want.tenant(), got.tenant());
        assertEquals(want.messageId(), got.messageId());
        assertEquals(want.queue(), got.queue());
        assertEquals(want.partition(), got.partition());
        assertEquals(want.transactionId(), got.transactionId());
        assertEquals(want.traceId(), got.traceId());
        assertEquals(want.producerSub(), got.producerSub());
        assertArrayEquals(want.payload(), got.payload());
    }

    @Test
    void everyEntryReadsBackExactlyAndTheFileEndsClean() throws IOException {
        List<SpoolFile.Entry> entries = List.of(entry(1), entry(2), entry(3));
        List<SpoolFile.Entry> read = readAll(write(entries, new byte[0]), SpoolFile.Ending.CLEAN);
        assertEquals(3, read.size());
        for (int i = 0; i < 3; i++) {
            assertSame(entries.get(i), read.get(i));
        }
    }

    @Test
    void aRecordCutShortAtTheEndIsIgnoredNotFatal() throws IOException {
        byte[] next = SpoolFile.encode(entry(9));
        for (int cut : new int[] {1, 4, 7, 8, 9, next.length - 1}) {
            List<SpoolFile.Entry> read = readAll(write(List.of(entry(1), entry(2)), Arrays.copyOf(next, cut)),
                    SpoolFile.Ending.TORN_TAIL);
            assertEquals(2, read.size(), "cut after " + cut + " bytes");
        }
    }

    @Test
    void aLastRecordWithBadBytesOrAZeroFilledTailIsATornTail() throws IOException {
        byte[] next = SpoolFile.encode(entry(9));
        next[next.length - 1] ^= 0x55;
        assertEquals(1, readAll(write(List.of(entry(1)), next), SpoolFile.Ending.TORN_TAIL).size());
        assertEquals(1, readAll(write(List.of(entry(1)), new byte[4096]), SpoolFile.Ending.TORN_TAIL).size());
    }

    @Test
    void aDamagedRecordFollowedByMoreDataIsCorruption() throws IOException {
        Path f = write(List.of(entry(1), entry(2), entry(3)), new byte[0]);
        byte[] bytes = Files.readAllBytes(f);
        int secondBody = SpoolFile.HEADER.length + SpoolFile.encode(entry(1)).length + 8 + 20;
        bytes[secondBody] ^= 0x01;
        Files.write(f, bytes);
        assertEquals(1, readAll(f, SpoolFile.Ending.CORRUPT).size(), "the readable prefix is still served");
    }

    @Test
    void aHeaderCutShortIsAnEmptyFileAndAForeignFileIsRecognised() throws IOException {
        Path torn = dir.resolve("spool-torn.log");
        Files.write(torn, Arrays.copyOf(SpoolFile.HEADER, 3));
        assertEquals(0, readAll(torn, SpoolFile.Ending.TORN_TAIL).size());
        Path empty = dir.resolve("spool-empty.log");
        Files.write(empty, new byte[0]);
        assertEquals(0, readAll(empty, SpoolFile.Ending.TORN_TAIL).size());
        Path foreign = dir.resolve("spool-foreign.log");
        Files.writeString(foreign, "hello, not a spool file\n");
        assertEquals(0, readAll(foreign, SpoolFile.Ending.NOT_A_SPOOL_FILE).size());
    }
}
