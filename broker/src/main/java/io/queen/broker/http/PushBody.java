package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.queen.broker.engine.PushService;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a push body in one streaming pass. Each item's {@code payload} is kept as the exact bytes
 * the client sent (the reference stores payloads verbatim): no re-serialisation, so a decimal such
 * as 0.10000000000000000001 keeps every digit, and no tree is built for the payload at all. Of the
 * item's other fields only queue, partition and transactionId are read, each as a small node for
 * validation; the rest are skipped (still checked as JSON) without building anything.
 */
final class PushBody {
    private PushBody() {
    }

    /** {@code producerSub}: stamped on every item; a {@code producerSub} field in an item is skipped like any other. */
    static List<PushService.Item> parse(byte[] body, String producerSub) {
        if (body.length == 0) {
            throw bad("request body is empty; a JSON object is required");
        }
        try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw bad("a JSON object is required");
            }
            List<PushService.Item> items = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("items".equals(name)) {
                    if (value != JsonToken.START_ARRAY) {
                        throw bad("items must be an array");
                    }
                    items = items(p, body, producerSub);
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                throw bad("unexpected content after the JSON object");
            }
            if (items == null) {
                throw bad("items must be an array");
            }
            return items;
        } catch (JsonProcessingException e) {
            throw bad("invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw bad(e.getMessage());
        }
    }

    private static List<PushService.Item> items(JsonParser p, byte[] body, String producerSub) throws IOException {
        List<PushService.Item> items = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            int index = items.size();
            if (t != JsonToken.START_OBJECT) {
                throw bad("items[" + index + "] must be an object");
            }
            // No map per item: at 100 items a request, building one for these three fields showed
            // in profiles (HashMap puts, resizes and lookups, about 3% of the broker's push CPU).
            JsonNode queue = null;
            JsonNode partition = null;
            JsonNode transactionId = null;
            byte[] payload = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                switch (field) {
                    case "payload" -> payload = raw(p, body);
                    case "queue" -> queue = value(p);
                    case "partition" -> partition = value(p);
                    case "transactionId" -> transactionId = value(p);
                    default -> p.skipChildren();
                }
            }
            items.add(BodyItems.pushItem(queue, partition, transactionId, payload, index, producerSub));
        }
        return items;
    }

    /**
     * The current value as a tree node. The fields next to a payload are nearly always strings
     * (queue, partition, transactionId): those are built directly, because readValueAsTree sets up
     * a deserialization context per call, which showed in profiles at 100 items per request.
     */
    private static JsonNode value(JsonParser p) throws IOException {
        return switch (p.currentToken()) {
            case VALUE_STRING -> JsonNodeFactory.instance.textNode(p.getText());
            case VALUE_NULL -> JsonNodeFactory.instance.nullNode();
            default -> p.readValueAsTree();
        };
    }

    /** The bytes of the current value, from its first to its last character. */
    private static byte[] raw(JsonParser p, byte[] body) throws IOException {
        long start = p.currentTokenLocation().getByteOffset();
        if (p.currentToken().isStructStart()) {
            p.skipChildren();
        } else {
            p.finishToken(); // strings are decoded lazily; the location is exact only once they are read
        }
        long end = p.currentLocation().getByteOffset();
        return Arrays.copyOfRange(body, (int) start, (int) end);
    }

    private static BadRequestException bad(String why) {
        return new BadRequestException("bad body: " + why);
    }
}
