package io.queen.broker.http;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NamesTest {
    @Test
    void namesWithinTheSchemasLimitsPass() {
        assertEquals("orders", Names.check(Names.QUEUE, "orders"));
        assertEquals("q".repeat(255), Names.check(Names.QUEUE, "q".repeat(255)));
        // varchar(255) counts characters: 255 emoji (two UTF-16 units each) fit.
        String emoji = "\uD83D\uDE00".repeat(255);
        assertEquals(emoji, Names.check(Names.QUEUE, emoji));
        assertNull(Names.check(Names.QUEUE, null));
    }

    @Test
    void overlongNamesAreRefusedNamingTheField() {
        BadRequestException e = assertThrows(BadRequestException.class,
                () -> Names.check(Names.QUEUE, "q".repeat(256), "items[3].queue"));
        assertEquals("invalid items[3].queue: longer than 255 characters", e.getMessage());
        // A partition name is capped in bytes: 1,025 two-byte characters are 2,050 bytes.
        e = assertThrows(BadRequestException.class, () -> Names.check(Names.PARTITION, "\u00e9".repeat(1025)));
        assertEquals("invalid partition: longer than 2048 bytes of UTF-8", e.getMessage());
    }

    @Test
    void textPostgresCannotStoreIsRefused() {
        for (String bad : new String[]{"a\u0000b", "a\uD800b", "a\uDC00", "\uD800"}) {
            BadRequestException e = assertThrows(BadRequestException.class,
                    () -> Names.check(Names.CONSUMER_GROUP, bad));
            assertTrue(e.getMessage().startsWith("invalid consumerGroup: contains "), e.getMessage());
        }
        assertNull(Names.storable("plain \uD83D\uDE00 text"));
    }

    @Test
    void theUrlMustDecodeToStorableUtf8() {
        assertNull(RequestTextFilter.problem("path", "/api/v1/pop/queue/caf%C3%A9"));
        assertNull(RequestTextFilter.problem("query string", "a=b+c&d=%2F"));
        assertEquals("invalid path: its percent-encoded bytes are not valid UTF-8",
                RequestTextFilter.problem("path", "/q/a%FFb"));
        assertEquals("invalid path: its percent-encoded bytes are not valid UTF-8",
                RequestTextFilter.problem("path", "/q/a%ED%A0%80b"));
        assertTrue(RequestTextFilter.problem("query string", "consumerGroup=a%00b").contains("NUL"));
    }

    @Test
    void aBodyNamesWhereItsUnstorableTextIs() throws Exception {
        var tree = Json.MAPPER.readTree("{\"operations\":[{\"items\":[{\"queue\":\"a\\u0000\"}]}]}");
        BadRequestException e = assertThrows(BadRequestException.class, () -> Json.requireStorable(tree));
        assertEquals("invalid value at operations[0].items[0].queue: contains a NUL character (\\u0000) at position 1",
                e.getMessage());
        var key = Json.MAPPER.readTree("{\"a\":{\"b\\u0000\":1}}");
        e = assertThrows(BadRequestException.class, () -> Json.requireStorable(key));
        assertTrue(e.getMessage().startsWith("invalid value at a: a member name contains a NUL"), e.getMessage());
        // A payload is stored as sent, never as text: its content is not held to these rules.
        Json.requireStorable(Json.MAPPER.readTree("{\"payload\":{\"k\":\"\\u0000\"}}"));
    }
}
