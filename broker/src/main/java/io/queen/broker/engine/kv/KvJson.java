package io.queen.broker.engine.kv;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

/**
 * JSON of the KV store. Stored values are the client's JSON and come back as it was sent, so numbers
 * are read as exact decimals (never through a double, which would round {@code 0.1000000000000000055}
 * or a 20-digit fraction) and written in plain notation ({@code 0.0000001}, not {@code 1E-7}).
 */
public final class KvJson {
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
            .enable(com.fasterxml.jackson.core.StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    private KvJson() {
    }

    /** Compact UTF-8 bytes of a value, as it is measured against QUEEN_KV_MAX_VALUE_BYTES. */
    public static byte[] bytes(JsonNode value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree did not serialise", e);
        }
    }

    static String text(JsonNode value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree did not serialise", e);
        }
    }

    static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a KV procedure answered text that is not JSON", e);
        }
    }
}
