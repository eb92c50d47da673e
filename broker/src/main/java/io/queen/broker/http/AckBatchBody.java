package io.queen.broker.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.Tenants;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a {@code POST /ack/batch} body in one streaming pass. Consumers send one after every pop of
 * 100 messages, and a Jackson tree of it (an object, a map and four text nodes per item) showed in
 * consume-phase profiles. The answers are exactly those of the tree reading it replaced, which
 * {@code AckBatchBodyTest} keeps as its oracle: the same values (non-string values through
 * {@link JsonNode#asText()}), the last of repeated keys, trailing content ignored, and the same
 * first error in the same order.
 */
final class AckBatchBody {
    record Parsed(String consumerGroup, List<AckService.Item> items) {
    }

    /** One element of the array as read: null for an element that is not an object. */
    private static final class RawItem {
        String transactionId;
        String partitionId;
        String status;
        String leaseId;
        String error;
    }

    private AckBatchBody() {
    }

    static Parsed parse(byte[] body) {
        if (body.length == 0) {
            throw new BadRequestException("bad body: request body is empty; a JSON object is required");
        }
        String group = null;
        List<RawItem> raw = null;
        try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
            JsonToken root = p.nextToken();
            if (root != JsonToken.START_OBJECT) {
                p.skipChildren(); // a malformed body is reported as such, as the tree reading did
                throw new BadRequestException("bad body: acknowledgments must be an array");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("acknowledgments".equals(name)) {
                    raw = value == JsonToken.START_ARRAY ? items(p) : skip(p);
                } else if ("consumerGroup".equals(name)) {
                    group = text(p);
                } else {
                    p.skipChildren();
                }
            }
        } catch (JsonProcessingException e) {
            throw new BadRequestException("bad body: invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRequestException("bad body: the request body could not be parsed as JSON");
        }
        if (raw == null) {
            throw new BadRequestException("bad body: acknowledgments must be an array");
        }
        List<AckService.Item> items = new ArrayList<>(raw.size());
        for (int i = 0; i < raw.size(); i++) {
            RawItem r = raw.get(i);
            if (r == null) {
                throw new BadRequestException("bad body: acknowledgments[" + i + "] must be an object");
            }
            items.add(BodyItems.ackItem(orEmpty(r.transactionId), orEmpty(r.partitionId), r.status,
                    orEmpty(r.leaseId), r.error));
        }
        return new Parsed(group == null || group.isEmpty() ? Tenants.QUEUE_MODE : group, items);
    }

    /** A repeated key replaces the earlier value; a value that is not an array reads as none. */
    private static List<RawItem> skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    private static List<RawItem> items(JsonParser p) throws IOException {
        List<RawItem> out = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                out.add(null);
                continue;
            }
            RawItem r = new RawItem();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "transactionId" -> r.transactionId = text(p);
                    case "partitionId" -> r.partitionId = text(p);
                    case "status" -> r.status = text(p);
                    case "leaseId" -> r.leaseId = text(p);
                    case "error" -> r.error = text(p);
                    default -> p.skipChildren();
                }
            }
            out.add(r);
        }
        return out;
    }

    /** The current value as the tree's asText() gives it; null for JSON null. */
    private static String text(JsonParser p) throws IOException {
        return switch (p.currentToken()) {
            case VALUE_STRING -> p.getText();
            case VALUE_NULL -> null;
            default -> p.<JsonNode>readValueAsTree().asText();
        };
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }
}
