package io.queen.broker.http;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

class PayloadTextTest {
    private static String problem(String json) {
        return PayloadText.problem(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void escapesJsonbHoldsPass() {
        assertNull(problem("{\"k\":\"plain\"}"));
        assertNull(problem("{\"k\":\"\\n\\t\\\"\\\\\"}"));
        assertNull(problem("{\"k\":\"\\u00e9 \\ud83d\\ude00 \\u0001\"}"));
        // An escaped backslash followed by u0000 is the six characters \u0000, not a NUL.
        assertNull(problem("{\"k\":\"\\\\u0000\"}"));
    }

    @Test
    void aNulOrAnUnpairedSurrogateEscapeIsRefused() {
        assertNotNull(problem("{\"k\":\"a\\u0000b\"}"));
        assertNotNull(problem("{\"k\":\"\\\\\\u0000\"}"));
        assertNotNull(problem("{\"k\":\"\\ud800\"}"));
        assertNotNull(problem("{\"k\":\"\\ud800\\u0041\"}"));
        assertNotNull(problem("{\"k\":\"\\udc00\"}"));
        assertNotNull(problem("{\"a\\u0000\":1}"));
    }
}
