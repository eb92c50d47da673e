package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

class BrokerHttpTest {
    private static int count(String haystack, String needle) {
        return BrokerHttp.count(haystack.getBytes(StandardCharsets.UTF_8), needle.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void countsEveryQueuedStatusOfAPushAnswer() {
        String answer = "[{\"index\":0,\"status\":\"queued\",\"messageId\":\"a\"},"
                + "{\"index\":1,\"status\":\"duplicate\",\"messageId\":\"b\"},"
                + "{\"index\":2,\"status\":\"queued\",\"messageId\":\"c\"}]";
        assertEquals(2, count(answer, "\"status\":\"queued\""));
        assertEquals(1, count(answer, "\"status\":\"duplicate\""));
    }

    @Test
    void matchesDoNotOverlapAndEdgesCount() {
        assertEquals(2, count("aaaa", "aa"));
        assertEquals(1, count("ab", "ab"));
        assertEquals(0, count("a", "ab"));
        assertEquals(0, count("", "ab"));
    }
}
