package io.queen.broker.http;

import io.queen.broker.engine.PushService;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PushBodyTest {

    private static List<PushService.Item> parse(String json) {
        return PushBody.parse(json.getBytes(StandardCharsets.UTF_8), null);
    }

    private static String payload(PushService.Item item) {
        return new String(item.payload(), StandardCharsets.UTF_8);
    }

    @Test
    void payloadsAreKeptExactlyAsSent() {
        List<PushService.Item> items = parse("{\"items\":["
                + "{\"queue\":\"q\",\"payload\":{\"amount\": 0.10000000000000000001, \"n\":[1, 2]}},"
                + "{\"payload\":12345678901234567890123,\"queue\":\"q\"},"
                + "{\"queue\":\"q\",\"payload\":\"a \\\"quoted\\\" \\u00e9 string\"},"
                + "{\"queue\":\"q\",\"payload\":null},"
                + "{\"queue\":\"q\",\"payload\":true}]}");
        assertEquals("{\"amount\": 0.10000000000000000001, \"n\":[1, 2]}", payload(items.get(0)));
        assertEquals("12345678901234567890123", payload(items.get(1)));
        assertEquals("\"a \\\"quoted\\\" \\u00e9 string\"", payload(items.get(2)));
        assertEquals("null", payload(items.get(3)));
        assertEquals("true", payload(items.get(4)));
    }

    @Test
    void theOtherFieldsAreReadWhateverTheirOrder() {
        PushService.Item item = parse("{\"extra\":{\"x\":1},\"items\":[{\"payload\":1,\"transactionId\":\"t\","
                + "\"partition\":\"p\",\"queue\":\"q\",\"unknown\":[1]}]}").get(0);
        assertEquals("q", item.queue());
        assertEquals("p", item.partition());
        assertEquals("t", item.transactionId());
        assertNull(item.traceId(), "push ignores traceId");
    }

    @Test
    void nullPartitionAndTransactionIdMeanTheirDefaults() {
        PushService.Item item = parse("{\"items\":[{\"queue\":\"q\",\"partition\":null,"
                + "\"transactionId\":null,\"payload\":1}]}").get(0);
        assertEquals("Default", item.partition());
        assertNull(item.transactionId(), "the broker mints one");
    }

    @Test
    void aPartitionNameOfTheLongestAcceptedLengthIsKept() {
        String name = "é".repeat(1024); // 2,048 bytes of UTF-8
        List<PushService.Item> items = parse("{\"items\":[{\"queue\":\"q\",\"partition\":\"" + name + "\",\"payload\":1}]}");
        assertEquals(name, items.get(0).partition());
    }

    @Test
    void theProducerIsTheCallerNeverTheBody() {
        byte[] body = ("{\"producerSub\":\"ceo\",\"items\":[{\"queue\":\"q\",\"producerSub\":\"ceo\","
                + "\"producer_sub\":\"ceo\",\"payload\":{\"producerSub\":\"ceo\"}}]}").getBytes(StandardCharsets.UTF_8);
        assertEquals("svc-a", PushBody.parse(body, "svc-a").get(0).producerSub());
        assertEquals(null, PushBody.parse(body, null).get(0).producerSub());
        assertEquals("{\"producerSub\":\"ceo\"}", new String(PushBody.parse(body, null).get(0).payload(),
                StandardCharsets.UTF_8), "the payload is the client's, untouched");
    }

    @Test
    void anEmptyItemListIsAccepted() {
        assertEquals(List.of(), parse("{\"items\":[]}"));
    }

    @Test
    void malformedBodiesAreBadRequests() {
        for (String bad : List.of("", "{not json", "[]", "{\"items\":{}}", "{\"nothing\":1}",
                "{\"items\":[1]}", "{\"items\":[{\"queue\":\"q\"}]}", "{\"items\":[{\"payload\":1}]}",
                "{\"items\":[]} trailing", "{\"items\":[{\"queue\":1,\"payload\":1}]}",
                "{\"items\":[{\"queue\":\"q\",\"partition\":{\"a\":1},\"payload\":1}]}",
                "{\"items\":[{\"queue\":\"q\",\"transactionId\":5,\"payload\":1}]}",
                "{\"items\":[{\"queue\":\"\",\"payload\":1}]}",
                "{\"items\":[{\"queue\":\"q\",\"partition\":\"a\\u0000b\",\"payload\":1}]}",
                "{\"items\":[{\"queue\":\"q\",\"partition\":\"" + "p".repeat(2049) + "\",\"payload\":1}]}")) {
            BadRequestException e = assertThrows(BadRequestException.class, () -> parse(bad), bad);
            assertTrue(e.getMessage().startsWith("bad body"), e.getMessage());
        }
    }
}
