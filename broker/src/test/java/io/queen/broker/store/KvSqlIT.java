package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * queen.kv_apply_v1, kv_list_v1 and kv_namespaces_v1 (024_kv.sql) called directly, as any SQL
 * caller would: the semantics live in SQL, so they are pinned here without the broker's own
 * validation in front. Every test works in a tenant of its own.
 */
class KvSqlIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static Database db;

    @BeforeAll
    static void start() {
        DatabaseSettings settings = TestPostgres.freshDatabase("kv_sql");
        db = Database.open(settings);
        new SchemaApplier(db.dataSource()).apply();
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    // ---------------------------------------------------------------- helpers

    private static UUID tenant() {
        return UUID.randomUUID();
    }

    static JsonNode apply(UUID tenant, String ops) throws SQLException {
        return apply(tenant, ops, 4_194_304L);
    }

    static JsonNode apply(UUID tenant, String ops, long readBytes) throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT queen.kv_apply_v1(?, ?::jsonb, 256, 1024, 65536, 1000, ?, false)::text")) {
            ps.setObject(1, tenant);
            ps.setString(2, ops);
            ps.setLong(3, readBytes);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return MAPPER.readTree(rs.getString(1));
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static JsonNode one(UUID tenant, String op) throws SQLException {
        JsonNode all = apply(tenant, "[" + op + "]");
        assertEquals(1, all.size(), all.toString());
        return all.get(0);
    }

    /** The refusal of a call: SQLSTATE and the stable identifier of the message. */
    private static PSQLException refused(UUID tenant, String ops) {
        return assertThrows(PSQLException.class, () -> apply(tenant, ops));
    }

    private static void assertRefused(String state, String reason, String ops) {
        PSQLException e = refused(tenant(), ops);
        assertEquals(state, e.getSQLState(), e.getMessage());
        assertEquals(reason, e.getServerErrorMessage().getMessage(), e.getMessage());
    }

    private static void sql(String statement) throws SQLException {
        try (Connection c = db.connection(); Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }

    private static void expire(UUID tenant, String ns, String key) throws SQLException {
        sql("UPDATE queen.kv SET expires_at = now() - interval '1 millisecond' WHERE tenant_id = '" + tenant
                + "' AND namespace = '" + ns + "' AND key = '" + key + "'");
    }

    private static long count(UUID tenant) throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM queen.kv WHERE tenant_id = ?")) {
            ps.setObject(1, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static List<String> keys(JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.path("key").asText()));
        return out;
    }

    // ---------------------------------------------------------------- put, get, delete

    @Test
    void putGetDeleteRoundTripWithOpaqueVersions() throws SQLException {
        UUID t = tenant();
        JsonNode put = one(t, "{\"op\":\"put\",\"ns\":\"orders\",\"key\":\"o/1\",\"value\":{\"n\":1},\"ttlSeconds\":600}");
        assertTrue(put.path("applied").asBoolean(), put.toString());
        assertEquals(0, put.path("index").asInt());
        assertEquals("put", put.path("op").asText());
        assertEquals("{\"n\":1}", put.path("value").toString());
        long v1 = put.path("version").asLong();
        assertTrue(v1 > 0);

        JsonNode get = one(t, "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"o/1\"}");
        assertTrue(get.path("found").asBoolean());
        assertEquals(v1, get.path("version").asLong());
        assertTrue(get.path("expiresAt").asText().endsWith("Z"), get.toString());
        assertTrue(get.path("updatedAt").asText().endsWith("Z"), get.toString());

        JsonNode again = one(t, "{\"op\":\"put\",\"ns\":\"orders\",\"key\":\"o/1\",\"value\":2,\"forever\":true}");
        assertNotEquals(v1, again.path("version").asLong(), "every write draws a new version");
        JsonNode forever = one(t, "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"o/1\"}");
        assertTrue(forever.path("expiresAt").isNull(), "a put replaces the expiry, never inherits it");

        JsonNode del = one(t, "{\"op\":\"delete\",\"ns\":\"orders\",\"key\":\"o/1\"}");
        assertTrue(del.path("applied").asBoolean());
        assertEquals("2", del.path("value").toString(), "a delete answers what it removed");
        JsonNode gone = one(t, "{\"op\":\"delete\",\"ns\":\"orders\",\"key\":\"o/1\"}");
        assertFalse(gone.path("applied").asBoolean());
        assertEquals("absent", gone.path("reason").asText());
        assertEquals(0, gone.path("version").asLong());
        JsonNode miss = one(t, "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"o/1\"}");
        assertFalse(miss.path("found").asBoolean());
        assertFalse(miss.has("value"));
    }

    @Test
    void aJsonNullIsAValueNotAnAbsence() throws SQLException {
        UUID t = tenant();
        one(t, "{\"op\":\"put\",\"ns\":\"n\",\"key\":\"k\",\"value\":null,\"ttlSeconds\":60}");
        JsonNode get = one(t, "{\"op\":\"get\",\"ns\":\"n\",\"key\":\"k\"}");
        assertTrue(get.path("found").asBoolean());
        assertTrue(get.has("value") && get.get("value").isNull());
    }

    // ---------------------------------------------------------------- preconditions

    @Test
    void putIfAbsentHasOneWinnerAndTheLoserSeesIt() throws SQLException {
        UUID t = tenant();
        JsonNode first = one(t, "{\"op\":\"putIfAbsent\",\"ns\":\"m\",\"key\":\"once\",\"value\":{\"owner\":1},\"ttlSeconds\":60}");
        JsonNode second = one(t, "{\"op\":\"putIfAbsent\",\"ns\":\"m\",\"key\":\"once\",\"value\":{\"owner\":2},\"ttlSeconds\":60}");
        assertTrue(first.path("applied").asBoolean());
        assertFalse(second.path("applied").asBoolean());
        assertEquals("exists", second.path("reason").asText());
        assertEquals("putIfAbsent", second.path("op").asText());
        assertEquals(1, second.path("value").path("owner").asInt());
        assertEquals(first.path("version").asLong(), second.path("version").asLong());
        JsonNode put0 = one(t, "{\"op\":\"put\",\"ns\":\"m\",\"key\":\"once\",\"value\":3,\"ttlSeconds\":60,\"expect\":0}");
        assertEquals("exists", put0.path("reason").asText(), "putIfAbsent is put with expect 0");
    }

    @Test
    void expectOfAVersionUpdatesOnlyThatVersionAndCreatesNothing() throws SQLException {
        UUID t = tenant();
        JsonNode absent = one(t, "{\"op\":\"put\",\"ns\":\"f\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60,\"expect\":90101}");
        assertFalse(absent.path("applied").asBoolean());
        assertEquals("absent", absent.path("reason").asText());
        assertEquals(0, count(t), "an expect on an absent key creates nothing");

        long v1 = one(t, "{\"op\":\"put\",\"ns\":\"f\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}").path("version").asLong();
        JsonNode v2 = one(t, "{\"op\":\"put\",\"ns\":\"f\",\"key\":\"k\",\"value\":2,\"ttlSeconds\":60,\"expect\":" + v1 + "}");
        assertTrue(v2.path("applied").asBoolean());
        JsonNode stale = one(t, "{\"op\":\"put\",\"ns\":\"f\",\"key\":\"k\",\"value\":9,\"ttlSeconds\":60,\"expect\":" + v1 + "}");
        assertFalse(stale.path("applied").asBoolean());
        assertEquals("version", stale.path("reason").asText());
        assertEquals(v2.path("version").asLong(), stale.path("version").asLong(), "the loser is told the current version");
        assertEquals("2", stale.path("value").toString());

        JsonNode delStale = one(t, "{\"op\":\"delete\",\"ns\":\"f\",\"key\":\"k\",\"expect\":" + v1 + "}");
        assertEquals("version", delStale.path("reason").asText());
        JsonNode delExists = one(t, "{\"op\":\"delete\",\"ns\":\"f\",\"key\":\"k\",\"expect\":0}");
        assertEquals("exists", delExists.path("reason").asText());
        JsonNode del = one(t, "{\"op\":\"delete\",\"ns\":\"f\",\"key\":\"k\",\"expect\":" + v2.path("version").asLong() + "}");
        assertTrue(del.path("applied").asBoolean());
        JsonNode delAbsent0 = one(t, "{\"op\":\"delete\",\"ns\":\"f\",\"key\":\"k\",\"expect\":0}");
        assertTrue(delAbsent0.path("applied").asBoolean(), "must-not-exist is met by an absent key");
        assertEquals(0, delAbsent0.path("version").asLong());
    }

    // ---------------------------------------------------------------- incr

    @Test
    void incrCountsAndItsBoundsAreTheAdmissionDecision() throws SQLException {
        UUID t = tenant();
        String op = "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"w\",\"delta\":1,\"ttlSeconds\":600,\"max\":2}";
        assertEquals(1, one(t, op).path("value").asInt());
        assertEquals(2, one(t, op).path("value").asInt());
        JsonNode over = one(t, op);
        assertFalse(over.path("applied").asBoolean());
        assertEquals("limit", over.path("reason").asText());
        assertEquals(2, over.path("value").asInt(), "no saturation: the current value comes back");

        JsonNode firstCall = one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"first\",\"delta\":10,\"forever\":true,\"max\":5}");
        assertEquals("limit", firstCall.path("reason").asText(), "the first call of a window is bounded too");
        assertEquals(0, firstCall.path("value").asInt());
        assertEquals(0, firstCall.path("version").asLong());

        JsonNode below = one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"w\",\"delta\":-5,\"forever\":true,\"min\":0}");
        assertEquals("limit", below.path("reason").asText());
        JsonNode frac = one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"w\",\"delta\":0.25,\"forever\":true}");
        assertEquals("2.25", frac.path("value").toString());
    }

    @Test
    void incrKeepsTheCreatorsExpiryAndRefusesANonNumber() throws SQLException {
        UUID t = tenant();
        one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"c\",\"delta\":1,\"ttlSeconds\":600}");
        String before = one(t, "{\"op\":\"get\",\"ns\":\"q\",\"key\":\"c\"}").path("expiresAt").asText();
        one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"c\",\"delta\":1,\"forever\":true}");
        JsonNode after = one(t, "{\"op\":\"get\",\"ns\":\"q\",\"key\":\"c\"}");
        assertEquals(before, after.path("expiresAt").asText(), "a live counter keeps its expiry");
        assertEquals(2, after.path("value").asInt());

        one(t, "{\"op\":\"put\",\"ns\":\"q\",\"key\":\"obj\",\"value\":{\"count\":0},\"ttlSeconds\":600}");
        JsonNode type = one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"obj\",\"delta\":1,\"forever\":true}");
        assertFalse(type.path("applied").asBoolean());
        assertEquals("type", type.path("reason").asText());

        expire(t, "q", "obj");
        JsonNode fresh = one(t, "{\"op\":\"incr\",\"ns\":\"q\",\"key\":\"obj\",\"delta\":1,\"ttlSeconds\":60}");
        assertTrue(fresh.path("applied").asBoolean(), "an expired value of any type counts as zero");
        assertEquals(1, fresh.path("value").asInt());
        assertFalse(one(t, "{\"op\":\"get\",\"ns\":\"q\",\"key\":\"obj\"}").path("expiresAt").isNull(),
                "an expired counter starts over with the new op's expiry");
    }

    // ---------------------------------------------------------------- expiry

    @Test
    void anExpiredRowIsAbsentAtOnceToEveryReadAndPrecondition() throws SQLException {
        UUID t = tenant();
        long v = one(t, "{\"op\":\"put\",\"ns\":\"e\",\"key\":\"k1\",\"value\":1,\"ttlSeconds\":600}").path("version").asLong();
        one(t, "{\"op\":\"put\",\"ns\":\"e\",\"key\":\"k2\",\"value\":2,\"ttlSeconds\":600}");
        expire(t, "e", "k1");

        assertFalse(one(t, "{\"op\":\"get\",\"ns\":\"e\",\"key\":\"k1\"}").path("found").asBoolean());
        JsonNode many = one(t, "{\"op\":\"getMany\",\"ns\":\"e\",\"keys\":[\"k1\",\"k2\"]}");
        assertEquals(List.of("k2"), keys(many.path("rows")));
        assertEquals("[\"k1\"]", many.path("missing").toString());
        assertEquals(List.of("k2"), keys(one(t, "{\"op\":\"getPrefix\",\"ns\":\"e\",\"prefix\":\"k\"}").path("rows")));
        JsonNode cas = one(t, "{\"op\":\"put\",\"ns\":\"e\",\"key\":\"k1\",\"value\":3,\"ttlSeconds\":60,\"expect\":" + v + "}");
        assertEquals("absent", cas.path("reason").asText(), "a fence against an expired lineage cannot succeed");
        assertTrue(cas.path("value").isNull());
        assertEquals("absent", one(t, "{\"op\":\"delete\",\"ns\":\"e\",\"key\":\"k1\"}").path("reason").asText());

        one(t, "{\"op\":\"put\",\"ns\":\"e\",\"key\":\"k3\",\"value\":1,\"ttlSeconds\":600}");
        expire(t, "e", "k3");
        JsonNode back = one(t, "{\"op\":\"putIfAbsent\",\"ns\":\"e\",\"key\":\"k3\",\"value\":4,\"ttlSeconds\":60}");
        assertTrue(back.path("applied").asBoolean(), "must-not-exist wins over an expired row nothing swept yet");
    }

    // ---------------------------------------------------------------- reads

    @Test
    void getPrefixPagesOnAKeysetCursorInByteOrder() throws SQLException {
        UUID t = tenant();
        StringBuilder puts = new StringBuilder();
        for (String k : List.of("scan/1", "scan/2", "scan/3", "scan/\u00e9", "scan/Z", "scanX", "scan%", "sca")) {
            puts.append(puts.isEmpty() ? "" : ",").append("{\"op\":\"put\",\"ns\":\"p\",\"key\":\"").append(k)
                    .append("\",\"value\":\"").append(k).append("\",\"ttlSeconds\":60}");
        }
        apply(t, "[" + puts + "]");
        JsonNode page = one(t, "{\"op\":\"getPrefix\",\"ns\":\"p\",\"prefix\":\"scan/\",\"limit\":2}");
        assertEquals(List.of("scan/1", "scan/2"), keys(page.path("rows")));
        assertTrue(page.path("truncated").asBoolean());
        assertEquals("scan/2", page.path("nextAfter").asText());
        JsonNode rest = one(t, "{\"op\":\"getPrefix\",\"ns\":\"p\",\"prefix\":\"scan/\",\"after\":\"scan/2\",\"limit\":5000}");
        assertEquals(List.of("scan/3", "scan/Z", "scan/\u00e9"), keys(rest.path("rows")), "byte order, not locale order");
        assertFalse(rest.path("truncated").asBoolean());
        assertTrue(rest.path("nextAfter").isNull());

        JsonNode pct = one(t, "{\"op\":\"getPrefix\",\"ns\":\"p\",\"prefix\":\"scan%\",\"keysOnly\":true}");
        assertEquals(List.of("scan%"), keys(pct.path("rows")), "% is a byte, not a wildcard");
        assertFalse(pct.path("rows").get(0).has("value"));
        JsonNode low = one(t, "{\"op\":\"getPrefix\",\"ns\":\"p\",\"prefix\":\"s\",\"limit\":0}");
        assertEquals(1, low.path("rows").size(), "a limit below 1 is clamped to 1");
    }

    @Test
    void theReadBudgetTruncatesAndKeepsTheRowThatCrossesIt() throws SQLException {
        UUID t = tenant();
        apply(t, "[{\"op\":\"put\",\"ns\":\"b\",\"key\":\"a\",\"value\":\"xxxxxxxxxx\",\"ttlSeconds\":60},"
                + "{\"op\":\"put\",\"ns\":\"b\",\"key\":\"b\",\"value\":\"xxxxxxxxxx\",\"ttlSeconds\":60},"
                + "{\"op\":\"put\",\"ns\":\"b\",\"key\":\"c\",\"value\":\"xxxxxxxxxx\",\"ttlSeconds\":60}]");
        JsonNode many = apply(t, "[{\"op\":\"getMany\",\"ns\":\"b\",\"keys\":[\"a\",\"b\",\"c\",\"d\"]}]", 15).get(0);
        assertEquals(List.of("a", "b"), keys(many.path("rows")));
        assertTrue(many.path("truncated").asBoolean());
        assertEquals("[\"d\"]", many.path("missing").toString(), "a key the budget cut is not reported missing");
        JsonNode page = apply(t, "[{\"op\":\"getPrefix\",\"ns\":\"b\",\"prefix\":\"a\"},"
                + "{\"op\":\"getMany\",\"ns\":\"b\",\"keys\":[\"b\",\"c\"]}]", 15);
        // Both are multi-key reads, run in (namespace, key or prefix) order: the getMany (no single
        // key, so first) spends 24 bytes of 15, keeping the row that crosses the line; the budget is
        // the call's, so the getPrefix after it has nothing left.
        assertEquals(List.of("b", "c"), keys(page.get(1).path("rows")));
        assertEquals(List.of(), keys(page.get(0).path("rows")), "the budget is shared by the call's reads");
        assertTrue(page.get(0).path("truncated").asBoolean());
    }

    @Test
    void answersAreIndexAlignedWhileWritesApplyInKeyOrderAndReadsLast() throws SQLException {
        UUID t = tenant();
        JsonNode r = apply(t, "["
                + "{\"op\":\"getMany\",\"ns\":\"o\",\"keys\":[\"z\",\"a\"]},"
                + "{\"op\":\"put\",\"ns\":\"o\",\"key\":\"z\",\"value\":1,\"ttlSeconds\":60},"
                + "{\"op\":\"get\",\"ns\":\"o\",\"key\":\"z\"},"
                + "{\"op\":\"put\",\"ns\":\"o\",\"key\":\"a\",\"value\":2,\"ttlSeconds\":60},"
                + "{\"op\":\"getPrefix\",\"ns\":\"o\",\"prefix\":\"a\"}]");
        assertEquals(5, r.size());
        for (int i = 0; i < r.size(); i++) {
            assertEquals(i, r.get(i).path("index").asInt(), r.toString());
        }
        assertEquals(List.of("getMany", "put", "get", "put", "getPrefix"),
                List.of(r.get(0).path("op").asText(), r.get(1).path("op").asText(), r.get(2).path("op").asText(),
                        r.get(3).path("op").asText(), r.get(4).path("op").asText()));
        assertEquals(List.of("a", "z"), keys(r.get(0).path("rows")), "a multi-key read sees the call's own writes");
        assertTrue(r.get(2).path("found").asBoolean(), "a get after a put of its key sees it");
        assertEquals(List.of("a"), keys(r.get(4).path("rows")));
    }

    @Test
    void tenantsNeverSeeEachOthersKeys() throws SQLException {
        UUID a = tenant();
        UUID b = tenant();
        one(a, "{\"op\":\"put\",\"ns\":\"shared\",\"key\":\"k\",\"value\":\"a\",\"forever\":true}");
        assertFalse(one(b, "{\"op\":\"get\",\"ns\":\"shared\",\"key\":\"k\"}").path("found").asBoolean());
        assertTrue(one(b, "{\"op\":\"putIfAbsent\",\"ns\":\"shared\",\"key\":\"k\",\"value\":\"b\",\"forever\":true}")
                .path("applied").asBoolean());
        assertEquals("\"a\"", one(a, "{\"op\":\"get\",\"ns\":\"shared\",\"key\":\"k\"}").path("value").toString());
    }

    // ---------------------------------------------------------------- required

    @Test
    void aLostRequiredPreconditionRollsTheWholeCallBack() throws SQLException {
        UUID t = tenant();
        long v = one(t, "{\"op\":\"put\",\"ns\":\"g\",\"key\":\"marker\",\"value\":{\"by\":\"first\"},\"ttlSeconds\":60}")
                .path("version").asLong();
        PSQLException e = refused(t, "["
                + "{\"op\":\"put\",\"ns\":\"g\",\"key\":\"effect\",\"value\":1,\"ttlSeconds\":60},"
                + "{\"op\":\"incr\",\"ns\":\"g\",\"key\":\"counter\",\"delta\":1,\"ttlSeconds\":60},"
                + "{\"op\":\"putIfAbsent\",\"ns\":\"g\",\"key\":\"marker\",\"value\":{\"by\":\"second\"},\"ttlSeconds\":60,\"required\":true}]");
        assertEquals("23514", e.getSQLState());
        assertEquals("kv_precondition_failed", e.getServerErrorMessage().getMessage());
        JsonNode detail;
        try {
            detail = MAPPER.readTree(e.getServerErrorMessage().getDetail());
        } catch (IOException io) {
            throw new AssertionError(io);
        }
        assertEquals(2, detail.path("index").asInt());
        assertEquals("exists", detail.path("reason").asText());
        assertEquals(v, detail.path("version").asLong());
        assertEquals("first", detail.path("value").path("by").asText());
        assertEquals(1, count(t), "neither the put nor the incr before the failed op stayed written");

        PSQLException incr = refused(t, "[{\"op\":\"incr\",\"ns\":\"g\",\"key\":\"c\",\"delta\":5,\"forever\":true,\"max\":1,\"required\":true}]");
        assertEquals("23514", incr.getSQLState(), "incr's limit escalates too");
        PSQLException del = refused(t, "[{\"op\":\"delete\",\"ns\":\"g\",\"key\":\"nothing\",\"required\":true}]");
        assertEquals("23514", del.getSQLState());
        assertFalse(one(t, "{\"op\":\"put\",\"ns\":\"g\",\"key\":\"x\",\"value\":1,\"forever\":true,\"expect\":7,\"required\":false}")
                .path("applied").asBoolean(), "required false keeps the verdict a verdict");
    }

    // ---------------------------------------------------------------- shape

    @Test
    void malformedCallsAreRefusedBeforeAnythingIsWritten() {
        assertRefused("22023", "kv_unknown_op", "[{\"op\":\"upsert\",\"ns\":\"a\",\"key\":\"k\"}]");
        assertRefused("22023", "kv_bad_namespace", "[{\"op\":\"get\",\"ns\":\"Orders\",\"key\":\"k\"}]");
        assertRefused("22023", "kv_bad_namespace", "[{\"op\":\"get\",\"ns\":5,\"key\":\"k\"}]");
        assertRefused("22023", "kv_bad_key", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"\"}]");
        assertRefused("22001", "kv_key_too_large", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"" + "\u20ac".repeat(171) + "\"}]");
        assertRefused("22023", "kv_tenant_not_an_input", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\",\"tenantId\":\"x\"}]");
        assertRefused("22023", "kv_expiry_not_specified", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1}]");
        assertRefused("22023", "kv_expiry_not_specified",
                "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":5,\"forever\":true}]");
        assertRefused("22023", "kv_expiry_not_specified",
                "[{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":false}]");
        assertRefused("22023", "kv_bad_ttl", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":0}]");
        assertRefused("22023", "kv_bad_ttl", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":1.5}]");
        assertRefused("22023", "kv_bad_request", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"forever\":true}]");
        assertRefused("22023", "kv_bad_expect", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true,\"expect\":null}]");
        assertRefused("22023", "kv_bad_expect", "[{\"op\":\"putIfAbsent\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true,\"expect\":3}]");
        assertRefused("22023", "kv_bad_request", "[{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":1,\"forever\":true,\"expect\":0}]");
        assertRefused("22023", "kv_bad_request", "[{\"op\":\"incr\",\"ns\":\"a\",\"key\":\"k\",\"delta\":\"1\",\"forever\":true}]");
        assertRefused("22023", "kv_prefix_required", "[{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"\"}]");
        assertRefused("22023", "kv_bad_request", "[{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":\"k\"}]");
        assertRefused("22023", "kv_duplicate_key_in_call", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true},"
                + "{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\"}]");
        assertRefused("22001", "kv_value_too_large", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":\""
                + "x".repeat(65_536) + "\",\"forever\":true}]");
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 257; i++) {
            many.append(i == 0 ? "" : ",").append("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k").append(i).append("\"}");
        }
        assertRefused("22023", "kv_too_many_ops", "[" + many + "]");
        assertRefused("22023", "kv_too_many_keys", "[{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\",\"limit\":1000},"
                + "{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"q\",\"limit\":100}]");
    }

    @Test
    void getPrefixIsRefusedInsideTheTransactionWire() throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT queen.kv_apply_v1(?, ?::jsonb, 64, 256, 65536, 1000, 4194304, true)")) {
            ps.setObject(1, tenant());
            ps.setString(2, "[{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"p\"}]");
            PSQLException e = assertThrows(PSQLException.class, ps::executeQuery);
            assertEquals("kv_get_prefix_not_allowed_in_transaction", e.getServerErrorMessage().getMessage());
        }
    }

    // ---------------------------------------------------------------- console reads

    @Test
    void theConsoleListsExpiredRowsOnlyWhenAskedAndCountsEveryRow() throws SQLException, IOException {
        UUID t = tenant();
        apply(t, "[{\"op\":\"put\",\"ns\":\"c1\",\"key\":\"a\",\"value\":1,\"ttlSeconds\":60},"
                + "{\"op\":\"put\",\"ns\":\"c1\",\"key\":\"b\",\"value\":2,\"ttlSeconds\":60},"
                + "{\"op\":\"put\",\"ns\":\"c0\",\"key\":\"a\",\"value\":3,\"forever\":true}]");
        expire(t, "c1", "a");
        try (Connection c = db.connection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.kv_namespaces_v1(?)::text")) {
                ps.setObject(1, t);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(MAPPER.readTree("[{\"namespace\":\"c0\",\"keys\":1},{\"namespace\":\"c1\",\"keys\":2}]"),
                            MAPPER.readTree(rs.getString(1)));
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT queen.kv_list_v1(?, ?, ?, ?, ?, ?, ?, 1000, 4194304)::text")) {
                ps.setObject(1, t);
                ps.setString(2, "c1");
                ps.setString(3, "");
                ps.setString(4, null);
                ps.setObject(5, null);
                ps.setBoolean(6, false);
                ps.setBoolean(7, true);
                JsonNode all;
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    all = MAPPER.readTree(rs.getString(1));
                }
                assertEquals(List.of("a", "b"), keys(all.path("rows")));
                assertTrue(all.path("rows").get(0).path("expired").asBoolean());
                assertFalse(all.path("rows").get(1).path("expired").asBoolean());
                assertEquals(2, all.path("bytes").asLong());
                ps.setBoolean(7, false);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(List.of("b"), keys(MAPPER.readTree(rs.getString(1)).path("rows")));
                }
            }
        }
    }
}
