package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;

/**
 * One validated KV operation (broker/DESIGN.md, KV store). {@link KvOps#parse} makes them from a
 * request's JSON; {@link #encode} writes the exact input {@code queen.kv_apply_v1} reads, with only the
 * fields the operation has, so a stray field of the request never reaches the store.
 */
public sealed interface KvOp {
    /** The operation's name as the client sent it (putIfAbsent stays putIfAbsent in the answer). */
    String op();

    String ns();

    /** Writes lock their one key; the rest lock nothing. */
    default boolean writes() {
        return false;
    }

    /** The key a write locks, or null for a read. */
    default String writtenKey() {
        return null;
    }

    void encode(ObjectNode into);

    /** A TTL in seconds, or null for forever (one of them is always given). */
    private static void expiry(ObjectNode into, Long ttlSeconds) {
        if (ttlSeconds == null) {
            into.put("forever", true);
        } else {
            into.put("ttlSeconds", ttlSeconds);
        }
    }

    record Get(String ns, String key) implements KvOp {
        public String op() {
            return "get";
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns).put("key", key);
        }
    }

    record GetMany(String ns, List<String> keys) implements KvOp {
        public GetMany {
            keys = List.copyOf(keys);
        }

        public String op() {
            return "getMany";
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns);
            keys.forEach(into.putArray("keys")::add);
        }
    }

    /** {@code limit} is already clamped to 1..QUEEN_KV_PREFIX_LIMIT; {@code after} null is the first page. */
    record GetPrefix(String ns, String prefix, String after, int limit, boolean keysOnly) implements KvOp {
        public String op() {
            return "getPrefix";
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns).put("prefix", prefix).put("limit", limit).put("keysOnly", keysOnly);
            if (after != null) {
                into.put("after", after);
            }
        }
    }

    /** {@code expect} null is unconditional; putIfAbsent is {@code ifAbsent} and sends no expect. */
    record Put(String ns, String key, JsonNode value, Long ttlSeconds, Long expect, boolean required,
               boolean ifAbsent) implements KvOp {
        public String op() {
            return ifAbsent ? "putIfAbsent" : "put";
        }

        public boolean writes() {
            return true;
        }

        public String writtenKey() {
            return key;
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns).put("key", key).set("value", value);
            expiry(into, ttlSeconds);
            if (expect != null && !ifAbsent) {
                into.put("expect", expect);
            }
            into.put("required", required);
        }
    }

    record Delete(String ns, String key, Long expect, boolean required) implements KvOp {
        public String op() {
            return "delete";
        }

        public boolean writes() {
            return true;
        }

        public String writtenKey() {
            return key;
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns).put("key", key);
            if (expect != null) {
                into.put("expect", expect);
            }
            into.put("required", required);
        }
    }

    /** {@code delta}, {@code min}, {@code max} are JSON numbers (min and max may be null: unbounded). */
    record Incr(String ns, String key, JsonNode delta, Long ttlSeconds, JsonNode min, JsonNode max,
                boolean required) implements KvOp {
        public String op() {
            return "incr";
        }

        public boolean writes() {
            return true;
        }

        public String writtenKey() {
            return key;
        }

        public void encode(ObjectNode into) {
            into.put("op", op()).put("ns", ns).put("key", key).set("delta", delta);
            expiry(into, ttlSeconds);
            if (min != null) {
                into.set("min", min);
            }
            if (max != null) {
                into.set("max", max);
            }
            into.put("required", required);
        }
    }
}
