package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.config.KvSettings;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The shape rules of a KV call, checked before a connection is taken. They are the rules
 * {@code queen.kv_apply_v1} checks again (024_kv.sql, kv_check_op_v1) with the same reasons, so an
 * answer is the same whichever of the two refuses; here the detail can name the operation.
 */
public final class KvOps {
    /** The reference broker's namespace rule: a namespace exists only while it has rows, so typos must fail. */
    static final Pattern NAMESPACE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
    /** About 3,000 years: far past any use, and far from PostgreSQL's timestamp range. */
    static final long MAX_TTL_SECONDS = 100_000_000_000L;
    static final int PREFIX_DEFAULT_LIMIT = 100;
    private static final Set<String> OPS = Set.of("get", "getMany", "getPrefix", "put", "putIfAbsent", "delete", "incr");
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

    private KvOps() {
    }

    /**
     * The call's budgets, measured on the request as sent: more operations than QUEEN_KV_MAX_OPS_PER_CALL,
     * more keys than QUEEN_KV_MAX_KEYS_PER_CALL (a getMany counts its keys, a getPrefix its clamped limit
     * since that is the most it can read, anything else one), or a value whose compact JSON is over
     * QUEEN_KV_MAX_VALUE_BYTES.
     */
    static void checkBudgets(List<JsonNode> ops, KvSettings limits) {
        if (ops.size() > limits.maxOpsPerCall()) {
            throw KvException.badRequest("kv_too_many_ops",
                    ops.size() + " operations in one call, at most " + limits.maxOpsPerCall() + " are allowed");
        }
        long keys = 0;
        for (JsonNode op : ops) {
            String name = op.path("op").asText("");
            if (name.equals("getMany")) {
                keys += op.path("keys").isArray() ? op.path("keys").size() : 0;
            } else if (name.equals("getPrefix")) {
                keys += clampedLimit(op.get("limit"), limits.prefixLimit());
            } else {
                keys++;
            }
        }
        if (keys > limits.maxKeysPerCall()) {
            throw KvException.badRequest("kv_too_many_keys",
                    keys + " keys in one call, at most " + limits.maxKeysPerCall() + " are allowed");
        }
        for (int i = 0; i < ops.size(); i++) {
            JsonNode value = ops.get(i).get("value");
            if (value != null) {
                int bytes = KvJson.bytes(value).length;
                if (bytes > limits.maxValueBytes()) {
                    throw KvException.tooLarge("kv_value_too_large", "operation " + i + ": the value is " + bytes
                            + " bytes, at most " + limits.maxValueBytes() + " are allowed (QUEEN_KV_MAX_VALUE_BYTES)");
                }
            }
        }
    }

    /** Every operation, in order; one key is written at most once per call (it keeps the lock order total). */
    static List<KvOp> parseAll(List<JsonNode> ops, KvSettings limits) {
        List<KvOp> out = new ArrayList<>(ops.size());
        Set<List<String>> written = new HashSet<>();
        for (int i = 0; i < ops.size(); i++) {
            KvOp op = parse(ops.get(i), i, limits);
            if (op.writes() && !written.add(List.of(op.ns(), op.writtenKey()))) {
                throw KvException.badRequest("kv_duplicate_key_in_call", "operation " + i
                        + " writes a key an earlier operation of the call writes; a key may be written once per call");
            }
            out.add(op);
        }
        return out;
    }

    static KvOp parse(JsonNode op, int index, KvSettings limits) {
        String at = "operation " + index;
        if (op == null || !op.isObject()) {
            throw KvException.badRequest("kv_bad_request", at + " is not a JSON object");
        }
        JsonNode name = op.get("op");
        if (name == null || !name.isTextual() || !OPS.contains(name.textValue())) {
            throw KvException.badRequest("kv_unknown_op",
                    at + ": op must be one of get, getMany, getPrefix, put, putIfAbsent, delete, incr");
        }
        if (op.has("tenant") || op.has("tenantId") || op.has("_tenant")) {
            throw KvException.badRequest("kv_tenant_not_an_input",
                    at + " carries a tenant field; the tenant comes from the request (x-queen-tenant)");
        }
        String ns = namespace(op.get("ns"), at);
        String kind = name.textValue();
        return switch (kind) {
            case "get" -> new KvOp.Get(ns, key(op.get("key"), at, limits));
            case "getMany" -> {
                JsonNode keys = op.get("keys");
                if (keys == null || !keys.isArray()) {
                    throw KvException.badRequest("kv_bad_request", at + ": getMany needs a keys array");
                }
                List<String> list = new ArrayList<>(keys.size());
                keys.forEach(k -> list.add(key(k, at, limits)));
                yield new KvOp.GetMany(ns, list);
            }
            case "getPrefix" -> getPrefix(op, ns, at, limits);
            case "put", "putIfAbsent" -> put(op, ns, kind.equals("putIfAbsent"), at, limits);
            case "delete" -> new KvOp.Delete(ns, key(op.get("key"), at, limits), expect(op, at), required(op, at));
            default -> incr(op, ns, at, limits);
        };
    }

    /** The namespace rule on its own (the console list names one namespace and no key). */
    public static String namespace(JsonNode ns, String at) {
        return namespace(ns == null || !ns.isTextual() ? null : ns.textValue(), at);
    }

    static String namespace(String ns, String at) {
        if (ns == null || !NAMESPACE.matcher(ns).matches()) {
            throw KvException.badRequest("kv_bad_namespace",
                    at + ": ns must match ^[a-z0-9][a-z0-9._-]{0,63}$ (lower case letters, digits, '.', '_', '-')");
        }
        return ns;
    }

    static String key(JsonNode key, String at, KvSettings limits) {
        if (key == null || !key.isTextual() || key.textValue().isEmpty()) {
            throw KvException.badRequest("kv_bad_key", at + ": the key must be a non-empty string");
        }
        int bytes = key.textValue().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > limits.maxKeyBytes()) {
            throw KvException.tooLarge("kv_key_too_large", at + ": the key is " + bytes + " bytes, at most "
                    + limits.maxKeyBytes() + " are allowed (QUEEN_KV_MAX_KEY_BYTES)");
        }
        return key.textValue();
    }

    private static KvOp getPrefix(JsonNode op, String ns, String at, KvSettings limits) {
        JsonNode prefix = op.get("prefix");
        if (prefix == null || !prefix.isTextual() || prefix.textValue().isEmpty()) {
            // A namespace is not a table to enumerate: the console list is the way to page through one.
            throw KvException.badRequest("kv_prefix_required", at + ": getPrefix needs a non-empty prefix");
        }
        key(prefix, at, limits);
        JsonNode limit = op.get("limit");
        if (limit != null && !isInteger(limit)) {
            throw KvException.badRequest("kv_bad_request", at + ": limit must be an integer");
        }
        JsonNode after = op.get("after");
        if (after != null && !after.isNull() && !after.isTextual()) {
            throw KvException.badRequest("kv_bad_request", at + ": after must be a key");
        }
        return new KvOp.GetPrefix(ns, prefix.textValue(),
                after == null || after.isNull() || after.textValue().isEmpty() ? null : after.textValue(),
                clampedLimit(limit, limits.prefixLimit()), bool(op, "keysOnly", at));
    }

    private static KvOp put(JsonNode op, String ns, boolean ifAbsent, String at, KvSettings limits) {
        String key = key(op.get("key"), at, limits);
        Long ttl = expiry(op, at);
        if (!op.has("value")) {
            throw KvException.badRequest("kv_bad_request",
                    at + ": " + op.get("op").textValue() + " needs a value (null is a value; no value is not)");
        }
        Long expect = expect(op, at);
        if (ifAbsent && expect != null && expect != 0) {
            throw KvException.badRequest("kv_bad_expect",
                    at + ": putIfAbsent is put with expect 0; another expect contradicts it");
        }
        return new KvOp.Put(ns, key, op.get("value"), ttl, expect, required(op, at), ifAbsent);
    }

    private static KvOp incr(JsonNode op, String ns, String at, KvSettings limits) {
        String key = key(op.get("key"), at, limits);
        if (op.has("expect")) {
            // incr is how a counter avoids a compare-and-swap loop; a precondition would bring it back.
            throw KvException.badRequest("kv_bad_request", at + ": incr takes no expect");
        }
        JsonNode delta = op.get("delta");
        if (delta == null || !delta.isNumber()) {
            throw KvException.badRequest("kv_bad_request", at + ": incr needs a numeric delta");
        }
        JsonNode min = bound(op, "min", at);
        JsonNode max = bound(op, "max", at);
        return new KvOp.Incr(ns, key, delta, expiry(op, at), min, max, required(op, at));
    }

    private static JsonNode bound(JsonNode op, String field, String at) {
        JsonNode v = op.get(field);
        if (v == null) {
            return null;
        }
        if (!v.isNumber()) {
            throw KvException.badRequest("kv_bad_request", at + ": " + field + " must be a number");
        }
        return v;
    }

    /**
     * Exactly one of {@code ttlSeconds} (an integer above 0) and {@code forever: true}: a default would
     * be how an idempotency marker becomes immortal. The TTL, or null for forever.
     */
    private static Long expiry(JsonNode op, String at) {
        int declared = 0;
        Long ttl = null;
        JsonNode t = op.get("ttlSeconds");
        if (t != null) {
            if (!isInteger(t) || t.decimalValue().compareTo(BigDecimal.ONE) < 0
                    || t.decimalValue().compareTo(BigDecimal.valueOf(MAX_TTL_SECONDS)) > 0) {
                throw KvException.badRequest("kv_bad_ttl",
                        at + ": ttlSeconds must be an integer from 1 to " + MAX_TTL_SECONDS);
            }
            ttl = t.decimalValue().longValueExact();
            declared++;
        }
        if (bool(op, "forever", at)) {
            declared++;
        }
        if (declared != 1) {
            throw KvException.badRequest("kv_expiry_not_specified",
                    at + ": exactly one of ttlSeconds (an integer > 0) and forever: true is required");
        }
        return ttl;
    }

    /** A present expect must be a version: null or a string is the caller's bug, not an unconditional write. */
    private static Long expect(JsonNode op, String at) {
        JsonNode e = op.get("expect");
        if (e == null) {
            return null;
        }
        if (!isInteger(e) || e.decimalValue().signum() < 0 || e.decimalValue().compareTo(LONG_MAX) > 0) {
            throw KvException.badRequest("kv_bad_expect",
                    at + ": expect must be a version (a non-negative integer; 0 = must not exist)");
        }
        return e.decimalValue().longValueExact();
    }

    private static boolean required(JsonNode op, String at) {
        return bool(op, "required", at);
    }

    private static boolean bool(JsonNode op, String field, String at) {
        JsonNode v = op.get(field);
        if (v == null) {
            return false;
        }
        if (!v.isBoolean()) {
            throw KvException.badRequest("kv_bad_request", at + ": " + field + " must be a boolean");
        }
        return v.booleanValue();
    }

    /** A JSON number with an integral value (3.0 is 3). */
    static boolean isInteger(JsonNode v) {
        if (!v.isNumber()) {
            return false;
        }
        if (v.isIntegralNumber()) {
            return true;
        }
        BigDecimal d = v.decimalValue();
        return d.signum() == 0 || d.stripTrailingZeros().scale() <= 0;
    }

    /** A limit of 1..prefixLimit: below is 1, above is the ceiling, absent (or not an integer) is 100. */
    static int clampedLimit(JsonNode limit, int prefixLimit) {
        if (limit == null || !isInteger(limit)) {
            return Math.min(PREFIX_DEFAULT_LIMIT, prefixLimit);
        }
        BigDecimal d = limit.decimalValue();
        if (d.compareTo(BigDecimal.ONE) < 0) {
            return 1;
        }
        return d.compareTo(BigDecimal.valueOf(prefixLimit)) > 0 ? prefixLimit : d.intValueExact();
    }
}
