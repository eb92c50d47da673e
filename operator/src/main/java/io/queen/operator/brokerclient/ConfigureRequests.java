package io.queen.operator.brokerclient;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.operator.crd.QueueSpec;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The mapping from a Queue's spec to the broker's {@code POST /api/v1/configure} body, and the
 * comparison of what the broker reports with what was asked. Pure functions: no I/O.
 *
 * <p>The body is {@code {queue, namespace?, task?, options{...}, mode:"replace"}} with only the
 * options the spec sets: in replace mode the broker resets every option left out to its default, so
 * the broker ends up with exactly the spec, and removing an option from the spec resets it.
 */
public final class ConfigureRequests {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ConfigureRequests() {
    }

    public static ObjectNode body(String queueName, QueueSpec spec) {
        ObjectNode body = JSON.createObjectNode();
        body.put("queue", queueName);
        // The broker folds top-level labels into the options only when non-empty; an absent label is
        // reset to "" by replace mode.
        if (spec.getNamespace() != null && !spec.getNamespace().isEmpty()) {
            body.put("namespace", spec.getNamespace());
        }
        if (spec.getTask() != null && !spec.getTask().isEmpty()) {
            body.put("task", spec.getTask());
        }
        ObjectNode options = spec.getOptions() == null ? JSON.createObjectNode() : JSON.valueToTree(spec.getOptions());
        body.set("options", options);
        body.put("mode", "replace");
        return body;
    }

    /** A stable fingerprint of a request body, recorded in status to tell what was last applied. */
    public static String hash(ObjectNode body) {
        try {
            // Sorted keys so that field order never changes the hash.
            byte[] canonical = JSON.writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                    .writeValueAsBytes(JSON.treeToValue(body, Map.class));
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
        } catch (NoSuchAlgorithmException | JsonProcessingException e) {
            throw new IllegalStateException("cannot hash a configure body", e);
        }
    }

    /**
     * How the queue on the broker differs from the request, one readable line per difference; empty
     * when it matches. Options are compared only when the broker reports them.
     */
    public static List<String> differences(ObjectNode request, BrokerQueue actual) {
        List<String> diffs = new ArrayList<>();
        compareLabel(diffs, "namespace", request.path("namespace").asText(""), actual.namespace());
        compareLabel(diffs, "task", request.path("task").asText(""), actual.task());
        if (actual.options() != null && actual.options().isObject()) {
            diffs.addAll(optionDifferences(request, actual.options()));
        }
        return diffs;
    }

    /** How the options the broker resolved (configure's answer or a read) differ from the requested ones. */
    public static List<String> optionDifferences(ObjectNode request, JsonNode resolvedOptions) {
        List<String> diffs = new ArrayList<>();
        JsonNode wanted = request.path("options");
        for (Iterator<Map.Entry<String, JsonNode>> it = wanted.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> option = it.next();
            JsonNode has = resolvedOptions.get(option.getKey());
            if (has == null || has.isNull()) {
                // An option the broker does not echo cannot be checked; that is not a difference.
                continue;
            }
            if (!sameValue(option.getValue(), has)) {
                diffs.add(option.getKey() + ": want " + option.getValue() + ", broker has " + has);
            }
        }
        return diffs;
    }

    private static void compareLabel(List<String> diffs, String label, String wanted, String has) {
        String actual = has == null ? "" : has;
        if (!wanted.equals(actual)) {
            diffs.add(label + ": want \"" + wanted + "\", broker has \"" + actual + "\"");
        }
    }

    private static boolean sameValue(JsonNode wanted, JsonNode has) {
        if (wanted.isNumber() && has.isNumber()) {
            return wanted.decimalValue().compareTo(has.decimalValue()) == 0;
        }
        if (wanted.isBoolean() && has.isBoolean()) {
            return wanted.booleanValue() == has.booleanValue();
        }
        return wanted.asText().equals(has.asText());
    }
}
