package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.config.KvSettings;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shape rules of a KV call, as the broker checks them before it takes a connection. */
class KvOpsTest {
    private static final KvSettings LIMITS = KvSettings.defaults();

    private static JsonNode json(String text) {
        return KvJson.parse(text);
    }

    private static KvException refused(String op) {
        return assertThrows(KvException.class, () -> KvOps.parseAll(List.of(json(op)), LIMITS));
    }

    private static void assertReason(String reason, String op) {
        assertEquals(reason, refused(op).reason(), op);
    }

    @Test
    void everyOperationParsesToItsTypedFormAndEncodesOnlyItsFields() {
        KvOp put = KvOps.parse(json("{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":{\"x\":0.10000000000000000001},"
                + "\"ttlSeconds\":60.0,\"expect\":3,\"stray\":1}"), 0, LIMITS);
        KvOp.Put p = assertInstanceOf(KvOp.Put.class, put);
        assertEquals(60L, p.ttlSeconds());
        assertEquals(3L, p.expect());
        var wire = KvJson.MAPPER.createObjectNode();
        put.encode(wire);
        assertEquals("{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":{\"x\":0.10000000000000000001},"
                + "\"ttlSeconds\":60,\"expect\":3,\"required\":false}", KvJson.text(wire), "no stray field, exact decimals");

        {
            KvOp op = KvOps.parse(json("{\"op\":\"putIfAbsent\",\"ns\":\"a\",\"key\":\"k\",\"value\":null,\"forever\":true}"),
                    0, LIMITS);
            assertEquals("putIfAbsent", op.op());
            var w = KvJson.MAPPER.createObjectNode();
            op.encode(w);
            assertEquals("{\"op\":\"putIfAbsent\",\"ns\":\"a\",\"key\":\"k\",\"value\":null,\"forever\":true,"
                    + "\"required\":false}", KvJson.text(w));
        }
        KvOp.GetPrefix gp = assertInstanceOf(KvOp.GetPrefix.class,
                KvOps.parse(json("{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\",\"limit\":5000,\"after\":\"\"}"), 0, LIMITS));
        assertEquals(1000, gp.limit(), "clamped, never refused");
        assertEquals(null, gp.after(), "an empty cursor is the first page");
        assertEquals(100, ((KvOp.GetPrefix) KvOps.parse(json("{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\"}"), 0,
                LIMITS)).limit());
        assertEquals(1, ((KvOp.GetPrefix) KvOps.parse(json("{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\",\"limit\":-3}"),
                0, LIMITS)).limit());
        KvOp.Incr incr = assertInstanceOf(KvOp.Incr.class, KvOps.parse(
                json("{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":-1.5,\"forever\":true,\"min\":0}"), 0, LIMITS));
        assertEquals(null, incr.ttlSeconds());
        assertEquals(null, incr.max());
        assertInstanceOf(KvOp.GetMany.class, KvOps.parse(json("{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":[\"x\",\"y\"]}"),
                0, LIMITS));
        assertInstanceOf(KvOp.Delete.class, KvOps.parse(json("{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\"}"), 0, LIMITS));
    }

    @Test
    void shapeRefusalsCarryTheStoresReasons() {
        assertReason("kv_unknown_op", "{\"op\":\"upsert\",\"ns\":\"a\",\"key\":\"k\"}");
        assertReason("kv_bad_request", "[1]");
        assertReason("kv_bad_namespace", "{\"op\":\"get\",\"ns\":\"A\",\"key\":\"k\"}");
        assertReason("kv_bad_namespace", "{\"op\":\"get\",\"ns\":\"" + "a".repeat(65) + "\",\"key\":\"k\"}");
        assertReason("kv_bad_namespace", "{\"op\":\"get\",\"key\":\"k\"}");
        assertReason("kv_bad_key", "{\"op\":\"get\",\"ns\":\"a\",\"key\":\"\"}");
        assertReason("kv_bad_key", "{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":[1]}");
        KvException big = refused("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"" + "\u00e9".repeat(257) + "\"}");
        assertEquals(KvException.Kind.TOO_LARGE, big.kind(), "514 bytes in 257 characters");
        assertEquals("kv_key_too_large", big.reason());
        assertReason("kv_tenant_not_an_input", "{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\",\"tenant\":\"t\"}");
        assertReason("kv_expiry_not_specified", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1}");
        assertReason("kv_expiry_not_specified", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":1,\"forever\":true}");
        assertReason("kv_expiry_not_specified", "{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":false}");
        assertReason("kv_bad_ttl", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":0}");
        assertReason("kv_bad_ttl", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":\"60\"}");
        assertReason("kv_bad_request", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"forever\":true}");
        assertReason("kv_bad_expect", "{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true,\"expect\":null}");
        assertReason("kv_bad_expect", "{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\",\"expect\":-1}");
        assertReason("kv_bad_expect", "{\"op\":\"putIfAbsent\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true,\"expect\":2}");
        assertReason("kv_bad_request", "{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":true,\"expect\":0}");
        assertReason("kv_bad_request", "{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"forever\":true}");
        assertReason("kv_bad_request", "{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":true,\"max\":\"9\"}");
        assertReason("kv_bad_request", "{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\",\"required\":\"yes\"}");
        assertReason("kv_prefix_required", "{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"\"}");
        assertReason("kv_prefix_required", "{\"op\":\"getPrefix\",\"ns\":\"a\"}");
        assertReason("kv_bad_request", "{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\",\"limit\":2.5}");
        assertReason("kv_bad_request", "{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":\"k\"}");
        KvException dup = assertThrows(KvException.class, () -> KvOps.parseAll(List.of(
                json("{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true}"),
                json("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\"}"),
                json("{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":true}")), LIMITS));
        assertEquals("kv_duplicate_key_in_call", dup.reason());
        assertTrue(dup.detail().startsWith("operation 2"), dup.detail());
    }

    @Test
    void theCallsBudgetsAreMeasuredOnTheRequest() {
        List<JsonNode> ops = new ArrayList<>();
        for (int i = 0; i < 257; i++) {
            ops.add(json("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k" + i + "\"}"));
        }
        assertEquals("kv_too_many_ops", assertThrows(KvException.class, () -> KvOps.checkBudgets(ops, LIMITS)).reason());
        KvOps.checkBudgets(ops.subList(0, 256), LIMITS);
        List<JsonNode> keys = List.of(json("{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\",\"limit\":1000}"),
                json("{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\",\"10\","
                        + "\"11\",\"12\",\"13\",\"14\",\"15\",\"16\",\"17\",\"18\",\"19\",\"20\",\"21\",\"22\",\"23\",\"24\"]}"),
                json("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\"}"));
        assertEquals("kv_too_many_keys", assertThrows(KvException.class, () -> KvOps.checkBudgets(keys, LIMITS)).reason(),
                "1000 + 24 + 1 keys");
        KvOps.checkBudgets(keys.subList(0, 2), LIMITS);
        String value = "\"" + "x".repeat(65_534) + "\"";
        KvOps.checkBudgets(List.of(json("{\"op\":\"put\",\"value\":" + value + "}")), LIMITS);
        KvException large = assertThrows(KvException.class, () -> KvOps.checkBudgets(
                List.of(json("{\"op\":\"put\",\"value\":\"x" + value.substring(1) + "}")), LIMITS));
        assertEquals(KvException.Kind.TOO_LARGE, large.kind());
        assertEquals("payload_too_large", large.error());
        assertEquals("kv_value_too_large", large.reason());
    }
}
