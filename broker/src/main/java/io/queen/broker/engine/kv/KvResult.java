package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;

import java.util.ArrayList;
import java.util.List;

/**
 * The answer to one operation of a call, at its index. Versions are opaque tokens (equality only);
 * instants are UTC text as the store renders them ({@code 2026-09-11T09:31:04.118217Z}), null for a
 * key kept forever.
 */
public sealed interface KvResult {
    int index();

    String op();

    /**
     * One stored row. {@code value} is null when the read asked for keys only (a stored JSON null is a
     * {@link NullNode}); {@code expired} is set by the console list only.
     */
    record Row(String key, JsonNode value, long version, String expiresAt, String updatedAt, Boolean expired) {
    }

    /** A get: when not found, only {@code key} is set besides it. */
    record Get(int index, boolean found, String key, JsonNode value, Long version, String expiresAt,
               String updatedAt) implements KvResult {
        public String op() {
            return "get";
        }
    }

    /** A getMany: the live rows in key order, the keys with no live row in request order. */
    record GetMany(int index, List<Row> rows, List<String> missing, boolean truncated) implements KvResult {
        public String op() {
            return "getMany";
        }
    }

    /** A getPrefix page: {@code nextAfter}, the last key, is set when {@code truncated}. */
    record GetPrefix(int index, List<Row> rows, boolean truncated, String nextAfter) implements KvResult {
        public String op() {
            return "getPrefix";
        }
    }

    /**
     * A put, putIfAbsent, delete or incr. Applied: the value written (or removed) and its version.
     * Not applied: {@code reason} (exists, absent, version, limit, type) with the current value and
     * version (null and 0 when there is no live row), so the loser needs no second read.
     */
    record Write(int index, String op, boolean applied, String reason, String key, JsonNode value, long version)
            implements KvResult {
    }

    /** One element of the procedure's answer array. */
    static KvResult of(JsonNode e) {
        int index = e.path("index").asInt();
        String op = e.path("op").asText();
        return switch (op) {
            case "get" -> e.path("found").asBoolean()
                    ? new Get(index, true, e.path("key").asText(), e.get("value"), e.path("version").asLong(),
                            text(e.get("expiresAt")), text(e.get("updatedAt")))
                    : new Get(index, false, e.path("key").asText(), null, null, null, null);
            case "getMany" -> new GetMany(index, rows(e.path("rows")), strings(e.path("missing")),
                    e.path("truncated").asBoolean());
            case "getPrefix" -> new GetPrefix(index, rows(e.path("rows")), e.path("truncated").asBoolean(),
                    text(e.get("nextAfter")));
            case "put", "putIfAbsent", "delete", "incr" -> new Write(index, op, e.path("applied").asBoolean(),
                    text(e.get("reason")), e.path("key").asText(),
                    e.get("value") == null ? NullNode.getInstance() : e.get("value"), e.path("version").asLong());
            default -> throw new IllegalStateException("kv_apply_v1 answered an unknown op " + op);
        };
    }

    static List<Row> rows(JsonNode rows) {
        List<Row> out = new ArrayList<>(rows.size());
        for (JsonNode r : rows) {
            out.add(new Row(r.path("key").asText(), r.get("value"), r.path("version").asLong(),
                    text(r.get("expiresAt")), text(r.get("updatedAt")),
                    r.has("expired") ? r.get("expired").asBoolean() : null));
        }
        return out;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>(array.size());
        array.forEach(s -> out.add(s.asText()));
        return out;
    }

    private static String text(JsonNode v) {
        return v == null || v.isNull() ? null : v.asText();
    }
}
