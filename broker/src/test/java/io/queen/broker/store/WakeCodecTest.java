package io.queen.broker.store;

import io.queen.broker.store.WakeCodec.Decoded;
import io.queen.broker.store.WakeCodec.Key;
import io.queen.broker.store.WakeCodec.Malformed;
import io.queen.broker.store.WakeCodec.Notice;
import io.queen.broker.store.WakeCodec.Own;
import io.queen.broker.store.WakeCodec.QueueOf;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WakeCodecTest {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
    private static final UUID OTHER = UUID.fromString("00000000-0000-0000-0000-0000000000bb");

    private final WakeCodec sender = new WakeCodec("broker-a");
    private final WakeCodec receiver = new WakeCodec("broker-b");

    private Notice heard(String payload) {
        return assertInstanceOf(Notice.class, receiver.decode(payload), payload);
    }

    private List<Key> keysOf(List<String> payloads) {
        List<Key> keys = new ArrayList<>();
        payloads.forEach(p -> keys.addAll(heard(p).keys()));
        return keys;
    }

    @Test
    void keysRoundTripInOrder() {
        List<Key> keys = List.of(new Key(TENANT, "orders", "p1"), new Key(TENANT, "orders", "p2"),
                new Key(OTHER, "é-queue \"quoted\"", "ünïcode"), new Key(TENANT, "more", null));
        List<String> payloads = sender.encodeKeys(keys);
        assertEquals(1, payloads.size());
        Notice notice = heard(payloads.getFirst());
        assertEquals(keys, notice.keys());
        assertEquals(List.of(), notice.changed());
    }

    @Test
    void theWireFormatIsStable() {
        assertEquals(List.of("{\"from\":\"broker-a\",\"keys\":[[\"" + TENANT + "\",\"q\",\"p\"],[\"" + TENANT
                + "\",\"q\",null]]}"), sender.encodeKeys(List.of(new Key(TENANT, "q", "p"), new Key(TENANT, "q", null))));
        assertEquals(List.of("{\"from\":\"broker-a\",\"keys\":[],\"config\":[[\"" + TENANT + "\",\"q\"]]}"),
                sender.encodeConfig(List.of(new QueueOf(TENANT, "q"))));
        assertEquals("queen_wake", WakeCodec.CHANNEL);
    }

    @Test
    void changedQueuesRoundTrip() {
        List<QueueOf> queues = List.of(new QueueOf(TENANT, "orders"), new QueueOf(OTHER, "é-queue"));
        List<String> payloads = sender.encodeConfig(queues);
        assertEquals(1, payloads.size());
        Notice notice = heard(payloads.getFirst());
        assertEquals(List.of(), notice.keys());
        assertEquals(queues, notice.changed());
    }

    @Test
    void nothingToSayIsNoPayload() {
        assertEquals(List.of(), sender.encodeKeys(List.of()));
        assertEquals(List.of(), sender.encodeConfig(List.of()));
    }

    @Test
    void ownPayloadsAreRecognisedHoweverTheyAreSpelled() {
        for (String payload : sender.encodeKeys(List.of(new Key(TENANT, "q", "p")))) {
            assertInstanceOf(Own.class, sender.decode(payload));
        }
        assertInstanceOf(Own.class, sender.decode("{\"keys\":[],\"from\":\"broker-a\"}"));
        assertInstanceOf(Own.class, sender.decode("{ \"from\" : \"broker-a\", \"keys\" : [] }"));
        assertInstanceOf(Notice.class, sender.decode("{\"from\":\"broker-b\",\"keys\":[]}"));
    }

    @Test
    void malformedPayloadsAreReportedNotThrown() {
        List<String> bad = new ArrayList<>(List.of(
                "", "not json", "[]", "null", "{}", "{\"from\":\"x\"}", "{\"keys\":[]}",
                "{\"from\":1,\"keys\":[]}", "{\"from\":\"x\",\"keys\":{}}",
                "{\"from\":\"x\",\"keys\":[[1]]}",
                "{\"from\":\"x\",\"keys\":[[\"" + TENANT + "\",\"q\"]]}",
                "{\"from\":\"x\",\"keys\":[[\"not-a-uuid\",\"q\",\"p\"]]}",
                "{\"from\":\"x\",\"keys\":[[\"" + TENANT + "\",2,\"p\"]]}",
                "{\"from\":\"x\",\"keys\":[\"" + TENANT + "\"]}",
                "{\"from\":\"x\",\"keys\":[],\"config\":[[\"" + TENANT + "\"]]}",
                "{\"from\":\"x\",\"keys\":[],\"config\":[[\"bad\",\"q\"]]}",
                "{\"from\":\"x\",\"keys\":[[\"" + TENANT + "\",\"q\",\"p\"]"));
        bad.add(null);
        for (String payload : bad) {
            Decoded decoded = assertDoesNotThrow(() -> receiver.decode(payload), String.valueOf(payload));
            Malformed m = assertInstanceOf(Malformed.class, decoded, String.valueOf(payload));
            assertTrue(m.reason() != null && !m.reason().contains("\n"), "one line: " + m.reason());
        }
    }

    @Test
    void aPayloadWithOneBadKeyDeliversNone() {
        String payload = "{\"from\":\"x\",\"keys\":[[\"" + TENANT + "\",\"q\",\"p\"],[1]]}";
        assertInstanceOf(Malformed.class, receiver.decode(payload));
    }

    @Test
    void manyKeysAreSplitIntoPayloadsUnderTheLimit() {
        List<Key> keys = new ArrayList<>();
        for (int q = 0; q < 400; q++) {
            keys.add(new Key(TENANT, "queue-with-a-longish-name-" + q, "partition-" + q));
        }
        List<String> payloads = sender.encodeKeys(keys);
        assertTrue(payloads.size() >= 2, payloads.size() + " payloads");
        for (String p : payloads) {
            assertTrue(p.getBytes(StandardCharsets.UTF_8).length <= WakeCodec.MAX_PAYLOAD_BYTES);
        }
        assertEquals(keys, keysOf(payloads));
    }

    @Test
    void pastTheCapAQueueNamesItsNewestPartitionsAndSaysThereIsMore() {
        List<Key> keys = new ArrayList<>();
        for (int p = 0; p < 500; p++) {
            keys.add(new Key(TENANT, "wide", "p" + p));
        }
        keys.add(new Key(TENANT, "narrow", "only"));
        List<Key> expected = new ArrayList<>(keys.subList(500 - WakeCodec.MAX_PARTITIONS_PER_QUEUE, 500));
        expected.add(new Key(TENANT, "wide", null));
        expected.add(new Key(TENANT, "narrow", "only"));
        assertEquals(expected, keysOf(sender.encodeKeys(keys)));
    }

    @Test
    void anEntryTooLongForAnyPayloadIsLeftOutAndTheRestGoes() {
        String huge = "x".repeat(WakeCodec.MAX_PAYLOAD_BYTES);
        List<Key> keys = List.of(new Key(TENANT, "q", huge), new Key(TENANT, "q", "fits"));
        assertEquals(List.of(new Key(TENANT, "q", "fits")), keysOf(sender.encodeKeys(keys)));
    }

    @Test
    void theLimitCountsBytesNotCharacters() {
        List<Key> keys = new ArrayList<>();
        for (int q = 0; q < 200; q++) {
            keys.add(new Key(TENANT, "é".repeat(40) + q, "ü".repeat(40)));
        }
        List<String> payloads = sender.encodeKeys(keys);
        for (String p : payloads) {
            assertTrue(p.getBytes(StandardCharsets.UTF_8).length <= WakeCodec.MAX_PAYLOAD_BYTES);
        }
        assertEquals(keys, keysOf(payloads));
    }
}
