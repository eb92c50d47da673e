package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * The wake channel's wire format: what one broker NOTIFYs on {@value #CHANNEL} and how another reads
 * it. No I/O here. Payloads:
 * {@code {"from":brokerId,"keys":[[tenant,queue,partition],...]}}, or
 * {@code {"from":brokerId,"keys":[],"config":[[tenant,queue],...]}} for changed queue options. A key
 * whose partition is {@code null} means "this queue has more, unnamed".
 */
final class WakeCodec {
    static final String CHANNEL = "queen_wake";
    // PostgreSQL refuses payloads of 8000 bytes or more; keep a margin.
    static final int MAX_PAYLOAD_BYTES = 7900;
    /** Partitions named per queue in one tick's notifications. */
    static final int MAX_PARTITIONS_PER_QUEUE = 64;

    private static final Logger LOG = Logger.getLogger(WakeCodec.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Messages became visible on a partition; a null partition stands for "more, unnamed". */
    record Key(UUID tenant, String queue, String partition) {
    }

    record QueueOf(UUID tenant, String queue) {
    }

    /** What a payload turned out to be. */
    sealed interface Decoded permits Own, Malformed, Notice {
    }

    /** This broker's own payload, heard back by its listener. */
    record Own() implements Decoded {
    }

    /** Not a payload of this format; {@code reason} says why, on one line. */
    record Malformed(String reason) implements Decoded {
    }

    /** Another broker's news: partitions to wake, in payload order, and queues whose options changed. */
    record Notice(List<Key> keys, List<QueueOf> changed) implements Decoded {
    }

    private static final Own OWN = new Own();

    private final String brokerId;
    /** How every payload this broker sends begins: its own echoes are recognised without parsing. */
    private final String ownHead;

    WakeCodec(String brokerId) {
        this.brokerId = Objects.requireNonNull(brokerId, "brokerId");
        this.ownHead = "{\"from\":" + quote(brokerId) + ",\"keys\":[";
    }

    /**
     * Keys as payloads under the NOTIFY limit. Per queue at most the newest
     * {@value #MAX_PARTITIONS_PER_QUEUE} partitions are named; beyond that one key without a
     * partition tells receivers "more, unnamed", so their hot lists scan the queue instead of
     * trusting the names.
     */
    List<String> encodeKeys(List<Key> keys) {
        Map<QueueOf, List<Key>> byQueue = new LinkedHashMap<>();
        for (Key k : keys) {
            byQueue.computeIfAbsent(new QueueOf(k.tenant(), k.queue()), q -> new ArrayList<>()).add(k);
        }
        List<String> entries = new ArrayList<>();
        for (List<Key> queueKeys : byQueue.values()) {
            if (queueKeys.size() > MAX_PARTITIONS_PER_QUEUE) {
                Key any = queueKeys.getFirst();
                List<Key> newest = new ArrayList<>(queueKeys.subList(queueKeys.size() - MAX_PARTITIONS_PER_QUEUE,
                        queueKeys.size()));
                newest.add(new Key(any.tenant(), any.queue(), null));
                queueKeys = newest;
            }
            for (Key k : queueKeys) {
                ArrayNode a = JsonNodeFactory.instance.arrayNode(3);
                entries.add(a.add(k.tenant().toString()).add(k.queue()).add(k.partition()).toString());
            }
        }
        return chunk(ownHead, entries, "]}");
    }

    /** Changed queues as payloads under the NOTIFY limit, after an empty key list (older receivers require it). */
    List<String> encodeConfig(List<QueueOf> queues) {
        List<String> entries = new ArrayList<>();
        for (QueueOf q : queues) {
            ArrayNode a = JsonNodeFactory.instance.arrayNode(2);
            entries.add(a.add(q.tenant().toString()).add(q.queue()).toString());
        }
        return chunk(ownHead + "],\"config\":[", entries, "]}");
    }

    /** Reads one payload; never throws, whatever the payload. */
    Decoded decode(String payload) {
        if (payload != null && payload.startsWith(ownHead)) {
            // Our own echo (the listener hears its sender): with acks releasing leases on a busy queue
            // these come every tick, and parsing them only to drop them showed in profiles.
            return OWN;
        }
        List<Key> keys = new ArrayList<>();
        List<QueueOf> changed = new ArrayList<>();
        try {
            JsonNode root = MAPPER.readTree(payload);
            if (root == null || !root.path("from").isTextual() || !root.path("keys").isArray()) {
                throw new IllegalArgumentException("expected {\"from\":...,\"keys\":[...]}");
            }
            if (brokerId.equals(root.get("from").asText())) {
                return OWN;
            }
            for (JsonNode key : root.get("keys")) {
                if (!key.isArray() || key.size() != 3 || !key.get(0).isTextual() || !key.get(1).isTextual()) {
                    throw new IllegalArgumentException("bad key " + key);
                }
                JsonNode partition = key.get(2);
                keys.add(new Key(UUID.fromString(key.get(0).asText()), key.get(1).asText(),
                        partition.isNull() ? null : partition.asText()));
            }
            for (JsonNode entry : root.path("config")) {
                if (!entry.isArray() || entry.size() != 2 || !entry.get(0).isTextual() || !entry.get(1).isTextual()) {
                    throw new IllegalArgumentException("bad config entry " + entry);
                }
                changed.add(new QueueOf(UUID.fromString(entry.get(0).asText()), entry.get(1).asText()));
            }
        } catch (Exception e) {
            return new Malformed(firstLine(e.getMessage()));
        }
        return new Notice(List.copyOf(keys), List.copyOf(changed));
    }

    /** {@code head + entries joined by commas + tail}, split into as few payloads under the limit as fit. */
    private static List<String> chunk(String head, List<String> entries, String tail) {
        int frame = utf8Length(head) + utf8Length(tail);
        List<String> out = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        int bodyBytes = 0;
        for (String json : entries) {
            int bytes = utf8Length(json);
            if (frame + bytes > MAX_PAYLOAD_BYTES) {
                LOG.warning("wake entry too long for NOTIFY (" + bytes + " bytes), other brokers will not hear of it: "
                        + abbreviate(json));
                continue;
            }
            int separator = body.isEmpty() ? 0 : 1;
            if (frame + bodyBytes + separator + bytes > MAX_PAYLOAD_BYTES) {
                out.add(head + body + tail);
                body.setLength(0);
                bodyBytes = 0;
                separator = 0;
            }
            if (separator == 1) {
                body.append(',');
            }
            body.append(json);
            bodyBytes += separator + bytes;
        }
        if (!body.isEmpty()) {
            out.add(head + body + tail);
        }
        return out;
    }

    /** At most 200 characters of {@code s}, for a log line. */
    static String abbreviate(String s) {
        return s == null || s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    private static String quote(String s) {
        return JsonNodeFactory.instance.textNode(s).toString();
    }

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
