package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.engine.AckOutcome;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.PopService;
import io.queen.broker.engine.PushService;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hand-written body writer must produce what Jackson's generator produced, byte for byte. */
class JsonBytesTest {

    private static byte[] jackson(String s) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out)) {
            g.writeString(s);
        }
        return out.toByteArray();
    }

    @Test
    void numbersAreWrittenAsLongToStringWritesThem() {
        List<Long> samples = new ArrayList<>(List.of(0L, 1L, 9L, 10L, 99L, 100L, -1L, -10L, 123456789L,
                Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, 999_999_999_999L, 1_000_000_000_000L));
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 2_000; i++) {
            samples.add(random.nextLong() >> random.nextInt(64));
        }
        for (long n : samples) {
            byte[] written = new JsonBytes(1).raw("[").number(n).raw("]").toByteArray();
            assertEquals("[" + n + "]", new String(written, StandardCharsets.US_ASCII));
        }
    }

    @Test
    void stringsAreQuotedAndEscapedAsJacksonDoes() throws IOException {
        List<String> samples = new ArrayList<>(List.of("", "plain-ascii_123", "quote\"inside", "back\\slash",
                "new\nline\ttab\r\b\f", "\u0000\u0001\u001f", "\u007f", "é ü ß", "日本語", "emoji \uD83D\uDE00",
                "slash/and<html>&", "mixed \" é \n"));
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 2_000; i++) {
            StringBuilder sb = new StringBuilder();
            for (int k = random.nextInt(20); k > 0; k--) {
                int kind = random.nextInt(4);
                sb.append(kind == 0 ? (char) random.nextInt(0x20) : kind == 1 ? (char) (0x20 + random.nextInt(0x60))
                        : kind == 2 ? (char) (0xA0 + random.nextInt(0x700)) : (char) (0x3000 + random.nextInt(0x1000)));
            }
            samples.add(sb.toString());
        }
        for (String s : samples) {
            byte[] ours = new JsonBytes(8).string(s).toByteArray();
            if (s.chars().anyMatch(c -> Character.isSurrogate((char) c))) {
                // Jackson's generator escapes a surrogate pair as two escapes, its encoder writes the
                // 4-byte UTF-8 form: both are the same JSON string.
                assertEquals(s, Json.MAPPER.readTree(ours).asText());
            } else {
                assertArrayEquals(jackson(s), ours, s);
            }
        }
        assertEquals("null", new String(new JsonBytes(8).string(null).toByteArray(), StandardCharsets.UTF_8));
    }

    @Test
    void uuidsAreTheirCanonicalStrings() {
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 1_000; i++) {
            UUID id = new UUID(random.nextLong(), random.nextLong());
            assertEquals("\"" + id + "\"", new String(new JsonBytes(8).uuid(id).toByteArray(), StandardCharsets.UTF_8));
        }
        assertEquals("\"00000000-0000-0000-0000-000000000000\"",
                new String(new JsonBytes(8).uuid(new UUID(0, 0)).toByteArray(), StandardCharsets.UTF_8));
    }

    @Test
    void pushResultsAndPopBodiesParseBackToWhatWasRendered() throws IOException {
        UUID id = UUID.randomUUID();
        byte[] push = PushHttpService.renderPushResults(List.of(
                new PushService.Result(0, id, "tx-\"1\"", "orders", "queued"),
                new PushService.Result(1, id, "tx-é", "orders", "duplicate")));
        JsonNode results = Json.MAPPER.readTree(push);
        assertEquals(2, results.size());
        assertEquals(id.toString(), results.get(0).get("message_id").asText());
        assertEquals("tx-\"1\"", results.get(0).get("transaction_id").asText());
        assertEquals("tx-é", results.get(1).get("transaction_id").asText());
        assertEquals("duplicate", results.get(1).get("status").asText());
        assertEquals(1, results.get(1).get("index").asInt());

        UUID pid = UUID.randomUUID();
        Instant t = Instant.parse("2026-11-30T12:00:00.123Z");
        PopService.Result pop = new PopService.Result("orders", "p1", pid, "lease-1", "__QUEUE_MODE__", List.of(
                new PopService.Message(id, "a", null, "{\"n\":[1,2]}".getBytes(StandardCharsets.UTF_8), null, t, pid,
                        "p1", "orders", 1),
                new PopService.Message(id, "b", id, new byte[0], "sub", t.plusMillis(1), pid, "p1", "orders", 2)), 1);
        JsonNode body = Json.MAPPER.readTree(PopHttpService.render(pop));
        assertTrue(body.get("success").asBoolean());
        assertEquals(pid.toString(), body.get("partitionId").asText());
        assertEquals(1, body.get("partitionsClaimed").asInt());
        JsonNode first = body.get("messages").get(0);
        assertEquals(2, first.get("data").get("n").size());
        assertTrue(first.get("traceId").isNull());
        assertEquals(Wire.timestamp(t), first.get("createdAt").asText());
        JsonNode second = body.get("messages").get(1);
        assertTrue(second.get("data").isNull());
        assertEquals(id.toString(), second.get("traceId").asText());
        assertEquals(Wire.timestamp(t.plusMillis(1)), second.get("createdAt").asText(), "a new instant is formatted anew");
        assertEquals(2, second.get("deliveryAttempt").asInt());
        assertEquals("lease-1", second.get("leaseId").asText());
    }

    /** What the ack routes answered before they wrote bytes: a Jackson tree of the same fields, in order. */
    private static byte[] ackResultsAsTree(List<AckService.Result> results) throws IOException {
        var out = Json.MAPPER.createArrayNode();
        for (AckService.Result r : results) {
            var o = out.addObject().put("index", r.index()).put("transactionId", r.transactionId())
                    .put("success", r.success());
            if (r.error() == null) {
                o.putNull("error");
            } else {
                o.put("error", r.error());
            }
            o.put("leaseReleased", r.leaseReleased()).put("dlq", r.dlq()).put("noop", r.noop());
        }
        return Json.MAPPER.writeValueAsBytes(out);
    }

    @Test
    void ackResultsAreWhatTheTreeWrote() throws IOException {
        SplittableRandom random = new SplittableRandom(11);
        String[] texts = {"tx-1", "tx-\"quoted\"", "tx-é", "", "back\\slash", "tab\there"};
        for (int round = 0; round < 200; round++) {
            List<AckService.Result> results = new ArrayList<>();
            for (int i = random.nextInt(5); i >= 0; i--) {
                AckOutcome[] outcomes = AckOutcome.values();
                results.add(new AckService.Result(results.size(), texts[random.nextInt(texts.length)],
                        outcomes[random.nextInt(outcomes.length)], random.nextBoolean(), random.nextBoolean(), null, null));
            }
            byte[] expected = ackResultsAsTree(results);
            assertArrayEquals(expected, AckHttpService.renderAckResults(results),
                    new String(expected, StandardCharsets.UTF_8));
        }
        assertEquals("[]", new String(AckHttpService.renderAckResults(List.of()), StandardCharsets.UTF_8));
    }
}
