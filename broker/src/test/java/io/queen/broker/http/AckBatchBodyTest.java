package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.Tenants;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The streaming batch-ack reader answers exactly what the Jackson-tree reading it replaced answered:
 * that reading is kept here as the oracle, and both read thousands of generated bodies, valid and
 * not.
 */
class AckBatchBodyTest {

    /** The tree reading of the ack/batch route before AckBatchBody, step for step. */
    private static AckBatchBody.Parsed oracle(byte[] body) {
        if (body.length == 0) {
            throw new BadRequestException("bad body: request body is empty; a JSON object is required");
        }
        JsonNode tree;
        try {
            tree = Json.MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw new BadRequestException("bad body: invalid JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new BadRequestException("bad body: cannot read request body: " + e.getMessage());
        }
        JsonNode list = tree.get("acknowledgments");
        if (list == null || !list.isArray()) {
            throw new BadRequestException("bad body: acknowledgments must be an array");
        }
        JsonNode g = tree.get("consumerGroup");
        String group = g == null || g.isNull() || g.asText().isEmpty() ? Tenants.QUEUE_MODE : g.asText();
        List<AckService.Item> items = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            items.add(BodyItems.ackItem(list.get(i), i));
        }
        return new AckBatchBody.Parsed(group, items);
    }

    /** Either the same error message or the same answer. */
    private static void assertSameAsOracle(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        AckBatchBody.Parsed expected;
        try {
            expected = oracle(bytes);
        } catch (BadRequestException e) {
            BadRequestException actual = assertThrows(BadRequestException.class, () -> AckBatchBody.parse(bytes), body);
            assertEquals(e.getMessage(), actual.getMessage(), body);
            return;
        }
        assertEquals(expected, AckBatchBody.parse(bytes), body);
    }

    @Test
    void theUsualBatchReadsAsItsItems() {
        UUID p = UUID.randomUUID();
        AckBatchBody.Parsed parsed = AckBatchBody.parse(("{\"consumerGroup\":\"billing\",\"acknowledgments\":["
                + "{\"transactionId\":\"t1\",\"partitionId\":\"" + p + "\",\"leaseId\":\"l\",\"status\":\"completed\"},"
                + "{\"transactionId\":\"t2\",\"partitionId\":\"" + p + "\",\"leaseId\":\"l\",\"status\":\"failed\","
                + "\"error\":\"boom\"}]}").getBytes(StandardCharsets.UTF_8));
        assertEquals("billing", parsed.consumerGroup());
        assertEquals(2, parsed.items().size());
        assertEquals("t2", parsed.items().get(1).transactionId());
        assertEquals(p, parsed.items().get(1).partitionId());
        assertEquals("boom", parsed.items().get(1).error());
    }

    @Test
    void handPickedBodiesMatchTheTreeReading() {
        String p = UUID.randomUUID().toString();
        for (String body : List.of("", " ", "null", "[]", "[1,2", "7", "\"x\"", "{", "{}", "{\"acknowledgments\":{}}",
                "{\"acknowledgments\":[]}", "{\"acknowledgments\":[] } trailing", "{\"acknowledgments\":[1]}",
                "{\"acknowledgments\":[{}]}", "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\"}]}",
                "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\",\"status\":null,\"error\":null}]}",
                "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\",\"status\":5,\"error\":{\"a\":1}}]}",
                "{\"acknowledgments\":[1],\"acknowledgments\":[{\"partitionId\":\"" + p + "\"}]}",
                "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\"}],\"acknowledgments\":5}",
                "{\"consumerGroup\":\"\",\"acknowledgments\":[]}", "{\"consumerGroup\":12,\"acknowledgments\":[]}",
                "{\"consumerGroup\":{\"x\":1},\"acknowledgments\":[]}", "{\"acknowledgments\":[{\"partitionId\":\"nope\"}]}",
                "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\"},\"x\",{\"partitionId\":\"bad\"}]}",
                "{\"acknowledgments\":[{\"partitionId\":\"" + p + "\",\"transactionId\":1.50,\"leaseId\":true}]}")) {
            assertSameAsOracle(body);
        }
    }

    @Test
    void generatedBodiesMatchTheTreeReading() {
        Random random = new Random(20261130);
        for (int n = 0; n < 5_000; n++) {
            String body = body(random);
            if (random.nextInt(20) == 0) {
                body = body.substring(0, random.nextInt(body.length() + 1)); // malformed or cut short
            }
            assertSameAsOracle(body);
        }
    }

    private static final String[] ITEM_FIELDS = {"transactionId", "partitionId", "status", "leaseId", "error", "other"};
    private static final String[] STATUSES = {"completed", "failed", "retry", "COMPLETED", "", "weird"};

    private static String body(Random r) {
        int shape = r.nextInt(30);
        if (shape == 0) {
            return "[" + item(r) + "]";
        }
        if (shape == 1) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("{");
        List<String> fields = new ArrayList<>();
        if (r.nextInt(10) > 0) {
            fields.add("\"acknowledgments\":" + (r.nextInt(15) == 0 ? value(r) : array(r)));
        }
        if (r.nextBoolean()) {
            fields.add("\"consumerGroup\":" + (r.nextInt(4) == 0 ? value(r) : "\"g" + r.nextInt(3) + "\""));
        }
        if (r.nextInt(5) == 0) {
            fields.add("\"acknowledgments\":" + array(r)); // a repeated key: the last one counts
        }
        if (r.nextInt(4) == 0) {
            fields.add("\"extra\":" + value(r));
        }
        java.util.Collections.shuffle(fields, r);
        sb.append(String.join(",", fields)).append('}');
        return sb.toString();
    }

    private static String array(Random r) {
        List<String> items = new ArrayList<>();
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) {
            items.add(r.nextInt(25) == 0 ? value(r) : item(r));
        }
        return "[" + String.join(",", items) + "]";
    }

    private static String item(Random r) {
        List<String> fields = new ArrayList<>();
        for (String f : ITEM_FIELDS) {
            int k = r.nextInt(10);
            if (k < 6) {
                fields.add("\"" + f + "\":" + typical(r, f));
            } else if (k < 8) {
                fields.add("\"" + f + "\":" + value(r));
            }
            if (r.nextInt(20) == 0) {
                fields.add("\"" + f + "\":" + typical(r, f)); // repeated
            }
        }
        java.util.Collections.shuffle(fields, r);
        return "{" + String.join(",", fields) + "}";
    }

    private static String typical(Random r, String field) {
        return switch (field) {
            case "partitionId" -> r.nextInt(12) == 0 ? "\"not-a-uuid\"" : "\"" + new UUID(r.nextLong(), r.nextLong()) + "\"";
            case "status" -> "\"" + STATUSES[r.nextInt(STATUSES.length)] + "\"";
            default -> "\"" + field.charAt(0) + r.nextInt(100) + "\\u00e9\"";
        };
    }

    /** Any JSON value. */
    private static String value(Random r) {
        return switch (r.nextInt(9)) {
            case 0 -> "null";
            case 1 -> "true";
            case 2 -> Integer.toString(r.nextInt(1000) - 500);
            case 3 -> "1.5e3";
            case 4 -> "0.10000000000000000001";
            case 5 -> "\"\"";
            case 6 -> "{\"a\":[1,{\"b\":null}]}";
            case 7 -> "[1,\"x\"]";
            default -> "\"s" + r.nextInt(10) + "\"";
        };
    }
}
