package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.DatabaseClock;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV routes over real HTTP on a real PostgreSQL (broker/DESIGN.md, KV store): every operation
 * and answer shape, the refusals and their codes, the path routes' edge cases, the required-rollback,
 * tenancy, the console reads, the kill switch seen by two brokers, and concurrent calls over shared
 * keys in different orders. Tenancy is on; each test works in a tenant of its own.
 */
class KvRoutesIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    // The routes' own behaviour, without the grant, quota and rate rungs (KvGuardIT covers those).
    private static final Map<String, String> TENANCY = Map.of("QUEEN_TENANCY_HEADER", "true",
            "QUEEN_KV_TRUSTED_PROXY", "true", "QUEEN_SWITCHES_REFRESH_MS", "100", "QUEEN_KV_REQUIRE_GRANT", "false",
            "QUEEN_KV_READ_RATE", "1000000", "QUEEN_KV_READ_BURST", "1000000", "QUEEN_KV_WRITE_RATE", "1000000",
            "QUEEN_KV_WRITE_BURST", "1000000");
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static DatabaseSettings db;
    private static Broker broker;
    private static int tenants;

    record Reply(int status, Map<String, List<String>> headers, String body) {
        JsonNode json() {
            try {
                return MAPPER.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON (" + status + "): " + body, e);
            }
        }

        String header(String name) {
            List<String> v = headers.get(name.toLowerCase());
            return v == null || v.isEmpty() ? null : v.getFirst();
        }
    }

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("kv_routes");
        broker = BrokerFixture.start(db, TENANCY);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static synchronized String tenant() {
        return String.format("22222222-0000-4000-8000-%012d", ++tenants);
    }

    static Reply call(Broker b, String tenant, String method, String path, String json) {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.port() + path))
                .timeout(Duration.ofSeconds(60))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
                .header("Content-Type", "application/json");
        if (tenant != null) {
            r.header("x-queen-tenant", tenant);
        }
        try {
            HttpResponse<String> res = CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
            Map<String, List<String>> headers = new java.util.HashMap<>();
            res.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(), v));
            return new Reply(res.statusCode(), headers, res.body());
        } catch (IOException e) {
            throw new AssertionError("HTTP request failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static Reply call(String tenant, String method, String path, String json) {
        return call(broker, tenant, method, path, json);
    }

    private static JsonNode ok(Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    /** The results of a batch, insisting on 200 and one element per operation. */
    private static JsonNode batch(String tenant, String ops) {
        JsonNode body = ok(call(tenant, "POST", "/api/v1/kv", "{\"operations\":[" + ops + "]}"));
        assertTrue(body.path("results").isArray(), body.toString());
        return body.path("results");
    }

    private static void assertRefused(Reply r, int status, String error, String reason) {
        assertEquals(status, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals(error, body.path("error").asText(), r.body());
        assertEquals(error, body.path("code").asText(), r.body());
        if (reason != null) {
            assertEquals(reason, body.path("reason").asText(), r.body());
        }
    }

    private static List<String> keys(JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.path("key").asText()));
        return out;
    }

    private static void sql(String statement) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }

    private static long kvRows(String tenant) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM queen.kv WHERE tenant_id = ?::uuid")) {
            ps.setString(1, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The first reply {@code until} accepts, calling again every 50 ms for up to 10 s. */
    private static Reply eventually(java.util.function.Supplier<Reply> call, Predicate<Reply> until) {
        return Awaitility.await("a reply that passes the test").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50)).until(call::get, until);
    }

    // ---------------------------------------------------------------- the batch

    @Test
    void aBatchAnswersEveryOperationAtItsIndex() {
        String t = tenant();
        JsonNode r = batch(t, "{\"op\":\"put\",\"ns\":\"orders\",\"key\":\"o1\",\"value\":{\"state\":\"new\"},\"ttlSeconds\":600},"
                + "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"o1\"},"
                + "{\"op\":\"putIfAbsent\",\"ns\":\"orders\",\"key\":\"o2\",\"value\":null,\"forever\":true},"
                + "{\"op\":\"getMany\",\"ns\":\"orders\",\"keys\":[\"o1\",\"o2\",\"o3\"]},"
                + "{\"op\":\"getPrefix\",\"ns\":\"orders\",\"prefix\":\"o\",\"keysOnly\":true},"
                + "{\"op\":\"incr\",\"ns\":\"quota\",\"key\":\"acme\",\"delta\":1,\"ttlSeconds\":3600,\"max\":1000},"
                + "{\"op\":\"delete\",\"ns\":\"orders\",\"key\":\"o3\"}");
        assertEquals(7, r.size());
        List<String> ops = List.of("put", "get", "putIfAbsent", "getMany", "getPrefix", "incr", "delete");
        for (int i = 0; i < 7; i++) {
            assertEquals(i, r.get(i).path("index").asInt(), r.toString());
            assertEquals(ops.get(i), r.get(i).path("op").asText(), r.toString());
        }
        JsonNode put = r.get(0);
        assertTrue(put.path("applied").asBoolean());
        assertEquals("o1", put.path("key").asText());
        assertEquals("{\"state\":\"new\"}", put.path("value").toString());
        assertFalse(put.has("reason"));
        JsonNode get = r.get(1);
        assertTrue(get.path("found").asBoolean());
        assertEquals(put.path("version").asLong(), get.path("version").asLong());
        assertTrue(get.path("expiresAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"),
                get.toString());
        assertTrue(get.path("updatedAt").isTextual());
        assertTrue(r.get(2).path("value").isNull() && r.get(2).path("applied").asBoolean());
        assertEquals(List.of("o1", "o2"), keys(r.get(3).path("rows")));
        assertEquals("[\"o3\"]", r.get(3).path("missing").toString());
        assertFalse(r.get(3).path("truncated").asBoolean());
        assertEquals(List.of("o1", "o2"), keys(r.get(4).path("rows")));
        assertFalse(r.get(4).path("rows").get(0).has("value"), "keysOnly");
        assertTrue(r.get(4).path("nextAfter").isNull());
        assertEquals(1, r.get(5).path("value").asInt());
        JsonNode del = r.get(6);
        assertFalse(del.path("applied").asBoolean());
        assertEquals("absent", del.path("reason").asText());
        assertEquals(0, del.path("version").asLong());

        // A bare array is the same call.
        JsonNode bare = ok(call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"o1\"}]"));
        assertTrue(bare.path("results").get(0).path("found").asBoolean());
        assertEquals("{\"results\":[]}", ok(call(t, "POST", "/api/v1/kv", "[]")).toString());
    }

    @Test
    void valuesComeBackAsTheyWereSent() {
        String t = tenant();
        String value = "{\"pi\":3.14159265358979323846264338327950288,\"big\":123456789012345678901234567890,"
                + "\"tiny\":0.0000001,\"s\":\"\u00e9\u4e2d\ud83d\ude00\",\"nested\":[true,null,{\"a\":[]}]}";
        batch(t, "{\"op\":\"put\",\"ns\":\"v\",\"key\":\"k\",\"value\":" + value + ",\"forever\":true}");
        String body = call(t, "GET", "/api/v1/kv/v/k", null).body();
        assertTrue(body.contains("3.14159265358979323846264338327950288"), body);
        assertTrue(body.contains("123456789012345678901234567890"), body);
        assertTrue(body.contains("0.0000001"), body);
        assertEquals("\u00e9\u4e2d\ud83d\ude00", call(t, "GET", "/api/v1/kv/v/k", null).json().path("value").path("s").asText());
    }

    @Test
    void preconditionsAreVerdictsAnd200s() {
        String t = tenant();
        JsonNode first = batch(t, "{\"op\":\"putIfAbsent\",\"ns\":\"m\",\"key\":\"once\",\"value\":{\"by\":1},\"ttlSeconds\":60}").get(0);
        JsonNode second = batch(t, "{\"op\":\"putIfAbsent\",\"ns\":\"m\",\"key\":\"once\",\"value\":{\"by\":2},\"ttlSeconds\":60}").get(0);
        assertTrue(first.path("applied").asBoolean());
        assertFalse(second.path("applied").asBoolean());
        assertEquals("exists", second.path("reason").asText());
        assertEquals(1, second.path("value").path("by").asInt(), "the loser is handed the winner's value");
        assertEquals(first.path("version").asLong(), second.path("version").asLong());

        JsonNode absent = batch(t, "{\"op\":\"put\",\"ns\":\"m\",\"key\":\"none\",\"value\":1,\"ttlSeconds\":60,\"expect\":12}").get(0);
        assertEquals("absent", absent.path("reason").asText());
        assertEquals(200, call(t, "GET", "/api/v1/kv/m/none", null).status());
        assertFalse(call(t, "GET", "/api/v1/kv/m/none", null).json().path("found").asBoolean(), "expect created nothing");
        long v = first.path("version").asLong();
        JsonNode cas = batch(t, "{\"op\":\"put\",\"ns\":\"m\",\"key\":\"once\",\"value\":3,\"ttlSeconds\":60,\"expect\":" + v + "}").get(0);
        assertTrue(cas.path("applied").asBoolean());
        JsonNode stale = batch(t, "{\"op\":\"put\",\"ns\":\"m\",\"key\":\"once\",\"value\":4,\"ttlSeconds\":60,\"expect\":" + v + "}").get(0);
        assertEquals("version", stale.path("reason").asText());

        batch(t, "{\"op\":\"put\",\"ns\":\"m\",\"key\":\"obj\",\"value\":{\"n\":0},\"ttlSeconds\":60}");
        JsonNode type = batch(t, "{\"op\":\"incr\",\"ns\":\"m\",\"key\":\"obj\",\"delta\":1,\"forever\":true}").get(0);
        assertEquals("type", type.path("reason").asText());
        JsonNode limit = batch(t, "{\"op\":\"incr\",\"ns\":\"m\",\"key\":\"w\",\"delta\":10,\"forever\":true,\"max\":5}").get(0);
        assertEquals("limit", limit.path("reason").asText());
        assertEquals(0, limit.path("value").asInt());
    }

    @Test
    void aLostRequiredPreconditionRollsBackTheCallAndAnswersTheVerdict() {
        String t = tenant();
        long v = batch(t, "{\"op\":\"put\",\"ns\":\"gate\",\"key\":\"order-1\",\"value\":{\"charge\":\"ch_1\"},\"ttlSeconds\":600}")
                .get(0).path("version").asLong();
        Reply r = call(t, "POST", "/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"gate\",\"key\":\"effect\",\"value\":1,\"ttlSeconds\":600},"
                + "{\"op\":\"incr\",\"ns\":\"gate\",\"key\":\"count\",\"delta\":1,\"ttlSeconds\":600},"
                + "{\"op\":\"putIfAbsent\",\"ns\":\"gate\",\"key\":\"order-1\",\"value\":{\"charge\":\"ch_2\"},\"ttlSeconds\":600,"
                + "\"required\":true}]");
        JsonNode verdict = ok(r);
        assertFalse(verdict.path("ok").asBoolean(true), r.body());
        assertEquals("kv_precondition", verdict.path("reason").asText());
        assertEquals(2, verdict.path("failedIndex").asInt());
        assertEquals("exists", verdict.path("kvReason").asText());
        assertEquals(v, verdict.path("version").asLong());
        assertEquals("ch_1", verdict.path("value").path("charge").asText());
        JsonNode after = batch(t, "{\"op\":\"getMany\",\"ns\":\"gate\",\"keys\":[\"effect\",\"count\"]}").get(0);
        assertEquals(0, after.path("rows").size(), "the whole call rolled back: " + after);

        // On the path routes too.
        JsonNode put = ok(call(t, "PUT", "/api/v1/kv/gate/order-1", "{\"value\":2,\"ttlSeconds\":60,\"expect\":1,\"required\":true}"));
        assertEquals("kv_precondition", put.path("reason").asText());
        assertEquals(0, put.path("failedIndex").asInt());
        assertEquals("version", put.path("kvReason").asText());
        JsonNode del = ok(call(t, "DELETE", "/api/v1/kv/gate/nothing", "{\"required\":true}"));
        assertEquals("absent", del.path("kvReason").asText());
    }

    @Test
    void anExpiredKeyIsGoneAtOnce() throws Exception {
        String t = tenant();
        batch(t, "{\"op\":\"put\",\"ns\":\"ttl\",\"key\":\"short\",\"value\":1,\"ttlSeconds\":1},"
                + "{\"op\":\"put\",\"ns\":\"ttl\",\"key\":\"long\",\"value\":2,\"ttlSeconds\":600}");
        assertTrue(call(t, "GET", "/api/v1/kv/ttl/short", null).json().path("found").asBoolean());
        sql("UPDATE queen.kv SET expires_at = now() - interval '1 millisecond' WHERE tenant_id = '" + t
                + "' AND key = 'long'");
        assertFalse(call(t, "GET", "/api/v1/kv/ttl/long", null).json().path("found").asBoolean(),
                "invisible the moment it expires, with its row still there");
        assertEquals(2, kvRows(t));
        DatabaseClock.awaitPast(db, "SELECT expires_at FROM queen.kv WHERE tenant_id = ?::uuid AND namespace = 'ttl'"
                + " AND key = 'short'", t);
        JsonNode r = batch(t, "{\"op\":\"get\",\"ns\":\"ttl\",\"key\":\"short\"},"
                + "{\"op\":\"getPrefix\",\"ns\":\"ttl\",\"prefix\":\"s\"},"
                + "{\"op\":\"putIfAbsent\",\"ns\":\"ttl\",\"key\":\"long\",\"value\":3,\"ttlSeconds\":60}");
        assertFalse(r.get(0).path("found").asBoolean());
        assertEquals(0, r.get(1).path("rows").size());
        assertTrue(r.get(2).path("applied").asBoolean(), "an expired key never counts as existing");
    }

    // ---------------------------------------------------------------- refusals

    @Test
    void refusalsCarryTheKvCodes() throws SQLException {
        String t = tenant();
        assertRefused(call(t, "POST", "/api/v1/kv", "{not json"), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "POST", "/api/v1/kv", "{\"ops\":[]}"), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "POST", "/api/v1/kv", "\"get\""), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "POST", "/api/v1/kv", null), 400, "kv_bad_request", "kv_bad_body");
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 257; i++) {
            many.append(i == 0 ? "" : ",").append("{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k").append(i).append("\"}");
        }
        assertRefused(call(t, "POST", "/api/v1/kv", "[" + many + "]"), 400, "kv_bad_request", "kv_too_many_ops");
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i < 1025; i++) {
            keys.append(i == 0 ? "" : ",").append("\"k").append(i).append('"');
        }
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"getMany\",\"ns\":\"a\",\"keys\":[" + keys + "]}]"), 400,
                "kv_bad_request", "kv_too_many_keys");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":\""
                + "x".repeat(65_535) + "\",\"forever\":true}]"), 413, "payload_too_large", "kv_value_too_large");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"" + "k".repeat(513) + "\"}]"),
                413, "payload_too_large", "kv_key_too_large");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1}]"), 400,
                "kv_bad_request", "kv_expiry_not_specified");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"getPrefix\",\"ns\":\"a\",\"prefix\":\"\"}]"), 400,
                "kv_bad_request", "kv_prefix_required");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"Bad NS\",\"key\":\"k\"}]"), 400,
                "kv_bad_request", "kv_bad_namespace");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"scan\",\"ns\":\"a\"}]"), 400, "kv_bad_request", "kv_unknown_op");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\",\"tenantId\":\"" + tenant()
                + "\"}]"), 400, "kv_bad_request", "kv_tenant_not_an_input");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\"},"
                + "{\"op\":\"delete\",\"ns\":\"a\",\"key\":\"k\"}]"), 400, "kv_bad_request", "kv_duplicate_key_in_call");
        assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":1,\"forever\":true,"
                + "\"expect\":null}]"), 400, "kv_bad_request", "kv_bad_expect");
        Reply nul = call(t, "POST", "/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"a\",\"key\":\"k\",\"value\":\"a\\u0000b\",\"forever\":true}]");
        assertRefused(nul, 400, "kv_bad_request", "kv_bad_body");
        Reply detail = call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"k\"},{\"op\":\"put\",\"ns\":\"a\","
                + "\"key\":\"j\",\"value\":1,\"ttlSeconds\":-1}]");
        assertTrue(detail.json().path("detail").asText().startsWith("operation 1"), detail.body());
        assertEquals(0, kvRows(t), "nothing of a refused call is written");

        // The tenant header's refusal is the broker-wide one.
        Reply badTenant = call("not-a-uuid", "POST", "/api/v1/kv", "[]");
        assertEquals(400, badTenant.status());
        assertEquals("invalid x-queen-tenant header (must be a UUID)", badTenant.json().path("error").asText());
    }

    @Test
    void aLockHeldPastTheStatementTimeoutIsA503WithRetryAfter() throws Exception {
        // The fixture's database settings carry the statement timeout (the environment's is replaced).
        DatabaseSettings quick = new DatabaseSettings(db.host(), db.port(), db.user(), db.password(), db.database(),
                db.ssl(), db.sslRejectUnauthorized(), db.poolSize(), 300, db.embedded(), db.embeddedDataDir());
        try (Broker impatient = BrokerFixture.start(quick, Map.of());
             Connection holder = TestPostgres.connect(db)) {
            String t = "00000000-0000-0000-0000-000000000001";
            assertEquals(200, call(impatient, t, "PUT", "/api/v1/kv/locks/held", "{\"value\":1,\"forever\":true}").status());
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("SELECT 1 FROM queen.kv WHERE namespace = 'locks' AND key = 'held' FOR UPDATE");
            }
            Reply r = call(impatient, t, "PUT", "/api/v1/kv/locks/held", "{\"value\":2,\"forever\":true}");
            assertRefused(r, 503, "kv_unavailable", "database_busy");
            assertEquals("1", r.header("retry-after"));
            assertTrue(r.json().has("errorId"));
            assertFalse(r.body().contains("statement timeout") || r.body().contains("canceling"), r.body());
            holder.rollback();
        }
    }

    // ---------------------------------------------------------------- path routes

    @Test
    void pathRoutesTakeTheKeyFromTheRestOfThePath() {
        String t = tenant();
        JsonNode put = ok(call(t, "PUT", "/api/v1/kv/orders/order/9f1/items", "{\"value\":[1,2],\"ttlSeconds\":600}"));
        assertTrue(put.path("applied").asBoolean(), put.toString());
        assertEquals("order/9f1/items", put.path("key").asText(), "slashes belong to the key, no leading slash");
        assertEquals(0, put.path("index").asInt());
        assertEquals("put", put.path("op").asText());

        Reply get = call(t, "GET", "/api/v1/kv/orders/order/9f1/items", null);
        assertEquals(200, get.status());
        assertEquals("\"" + put.path("version").asLong() + "\"", get.header("etag"));
        assertTrue(get.json().path("found").asBoolean());
        assertEquals("[1,2]", get.json().path("value").toString());
        assertTrue(batch(t, "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"order/9f1/items\"}").get(0).path("found").asBoolean(),
                "the batch and the path routes address the same rows");

        Reply miss = call(t, "GET", "/api/v1/kv/orders/nope", null);
        assertEquals(200, miss.status(), "a miss is a 200");
        assertFalse(miss.json().path("found").asBoolean(true));
        assertNull(miss.header("etag"));

        // %2F is decoded once: a/b either way; %252F stays the literal %2F.
        ok(call(t, "PUT", "/api/v1/kv/orders/a%2Fb", "{\"value\":\"slash\",\"forever\":true}"));
        assertEquals("\"slash\"", call(t, "GET", "/api/v1/kv/orders/a/b", null).json().path("value").toString());
        assertEquals("a/b", call(t, "GET", "/api/v1/kv/orders/a%2Fb", null).json().path("key").asText());
        ok(call(t, "PUT", "/api/v1/kv/orders/a%252Fb", "{\"value\":\"literal\",\"forever\":true}"));
        assertEquals("a%2Fb", call(t, "GET", "/api/v1/kv/orders/a%252Fb", null).json().path("key").asText());
        assertEquals("\"slash\"", call(t, "GET", "/api/v1/kv/orders/a/b", null).json().path("value").toString());
        ok(call(t, "PUT", "/api/v1/kv/orders/caf%C3%A9%20%2B1", "{\"value\":1,\"forever\":true}"));
        assertTrue(batch(t, "{\"op\":\"get\",\"ns\":\"orders\",\"key\":\"caf\u00e9 +1\"}").get(0).path("found").asBoolean());

        JsonNode del = ok(call(t, "DELETE", "/api/v1/kv/orders/order/9f1/items", null));
        assertTrue(del.path("applied").asBoolean(), "a delete without a body");
        assertEquals("[1,2]", del.path("value").toString());
        JsonNode must = ok(call(t, "DELETE", "/api/v1/kv/orders/order/9f1/items", "{\"expect\":0}"));
        assertTrue(must.path("applied").asBoolean(), "must-not-exist, met");
        assertTrue(ok(call(t, "DELETE", "/api/v1/kv/orders/a%252Fb", "null")).path("applied").asBoolean());
    }

    @Test
    void pathRoutesRefuseQueryStringsAndFieldsTheUrlNames() {
        String t = tenant();
        assertRefused(call(t, "GET", "/api/v1/kv/orders/k?prefix=quota:acme:", null), 400, "kv_bad_request",
                "kv_no_query_string");
        assertRefused(call(t, "PUT", "/api/v1/kv/orders/k?ttl=5", "{\"value\":1,\"forever\":true}"), 400,
                "kv_bad_request", "kv_no_query_string");
        assertRefused(call(t, "DELETE", "/api/v1/kv/orders/k?x", null), 400, "kv_bad_request", "kv_no_query_string");
        for (String field : List.of("op", "ns", "namespace", "key")) {
            assertRefused(call(t, "PUT", "/api/v1/kv/orders/k", "{\"value\":1,\"forever\":true,\"" + field + "\":\"x\"}"),
                    400, "kv_bad_request", "kv_field_in_path");
        }
        assertRefused(call(t, "DELETE", "/api/v1/kv/orders/k", "{\"key\":\"other\"}"), 400, "kv_bad_request",
                "kv_field_in_path");
        assertRefused(call(t, "PUT", "/api/v1/kv/orders/k", "[1]"), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "PUT", "/api/v1/kv/orders/k", null), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "DELETE", "/api/v1/kv/orders/k", "5"), 400, "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "PUT", "/api/v1/kv/orders/k", "{\"value\":1}"), 400, "kv_bad_request",
                "kv_expiry_not_specified");
        assertRefused(call(t, "PUT", "/api/v1/kv/Orders/k", "{\"value\":1,\"forever\":true}"), 400, "kv_bad_request",
                "kv_bad_namespace");
        // Fields a PUT does not take are not forwarded (an incr's delta does nothing here).
        JsonNode put = ok(call(t, "PUT", "/api/v1/kv/orders/k", "{\"value\":1,\"forever\":true,\"delta\":5,\"tenantId\":\"x\"}"));
        assertTrue(put.path("applied").asBoolean());
        assertEquals(404, call(t, "GET", "/api/v1/kv/orders", null).status(), "no key, no route");
        assertEquals(404, call(t, "GET", "/api/v1/kv/orders/", null).status());
        assertEquals(404, call(t, "GET", "/api/v1/kv/orders%2Fk", null).status(), "one raw segment is no key");
        assertEquals(404, call(t, "PATCH", "/api/v1/kv/orders/k", "{}").status());
    }

    // ---------------------------------------------------------------- tenancy and purge

    @Test
    void tenantsAreIsolatedAndAPurgeTakesTheirKeys() throws Exception {
        String a = tenant();
        String b = tenant();
        batch(a, "{\"op\":\"put\",\"ns\":\"shared\",\"key\":\"k\",\"value\":\"a\",\"forever\":true},"
                + "{\"op\":\"put\",\"ns\":\"shared\",\"key\":\"k2\",\"value\":\"a\",\"forever\":true}");
        assertFalse(call(b, "GET", "/api/v1/kv/shared/k", null).json().path("found").asBoolean());
        assertTrue(ok(call(b, "PUT", "/api/v1/kv/shared/k", "{\"value\":\"b\",\"forever\":true,\"expect\":0}"))
                .path("applied").asBoolean());
        assertEquals("\"a\"", call(a, "GET", "/api/v1/kv/shared/k", null).json().path("value").toString());
        assertEquals(1, ok(call(b, "GET", "/api/v1/resources/kv/namespaces", null)).path("namespaces").get(0).path("keys").asInt());

        JsonNode report;
        int steps = 0;
        do {
            report = ok(call(null, "POST", "/api/v1/system/tenants/" + a + "/purge", "{}"));
        } while (!report.path("done").asBoolean() && ++steps < 20);
        assertTrue(report.path("done").asBoolean(), report.toString());
        assertEquals(2, report.path("rows").path("queen.kv").asInt(), report.toString());
        assertEquals(0, kvRows(a));
        assertEquals(1, kvRows(b), "another tenant's keys stay");
    }

    // ---------------------------------------------------------------- console

    @Test
    void theConsoleListsNamespacesAndPagesThroughOne() throws Exception {
        String t = tenant();
        batch(t, "{\"op\":\"put\",\"ns\":\"jobs\",\"key\":\"j/1\",\"value\":{\"n\":1},\"ttlSeconds\":600},"
                + "{\"op\":\"put\",\"ns\":\"jobs\",\"key\":\"j/2\",\"value\":{\"n\":2},\"ttlSeconds\":600},"
                + "{\"op\":\"put\",\"ns\":\"jobs\",\"key\":\"j/3\",\"value\":{\"n\":3},\"forever\":true},"
                + "{\"op\":\"put\",\"ns\":\"alpha\",\"key\":\"x\",\"value\":0,\"forever\":true}");
        sql("UPDATE queen.kv SET expires_at = now() - interval '1 second' WHERE tenant_id = '" + t + "' AND key = 'j/2'");
        JsonNode ns = ok(call(t, "GET", "/api/v1/resources/kv/namespaces", null));
        assertEquals("{\"namespaces\":[{\"namespace\":\"alpha\",\"keys\":1},{\"namespace\":\"jobs\",\"keys\":3}]}",
                ns.toString(), "byte order; every row counted, expired ones too");

        JsonNode first = ok(call(t, "POST", "/api/v1/resources/kv/list",
                "{\"namespace\":\"jobs\",\"limit\":2,\"includeExpired\":true}"));
        assertEquals(List.of("j/1", "j/2"), keys(first.path("rows")));
        assertFalse(first.path("rows").get(0).path("expired").asBoolean());
        assertTrue(first.path("rows").get(1).path("expired").asBoolean());
        assertTrue(first.path("truncated").asBoolean());
        assertEquals("j/2", first.path("nextAfter").asText());
        assertTrue(first.path("bytes").asLong() > 0);
        JsonNode next = ok(call(t, "POST", "/api/v1/resources/kv/list",
                "{\"namespace\":\"jobs\",\"after\":\"j/2\",\"includeExpired\":true,\"keysOnly\":true}"));
        assertEquals(List.of("j/3"), keys(next.path("rows")));
        assertFalse(next.path("rows").get(0).has("value"));
        assertTrue(next.path("rows").get(0).path("expiresAt").isNull());
        assertEquals(0, next.path("bytes").asLong());
        assertFalse(next.path("truncated").asBoolean());
        JsonNode live = ok(call(t, "POST", "/api/v1/resources/kv/list", "{\"namespace\":\"jobs\",\"prefix\":\"j/\"}"));
        assertEquals(List.of("j/1", "j/3"), keys(live.path("rows")), "expired rows only when asked for");
        assertEquals(0, ok(call(t, "POST", "/api/v1/resources/kv/list", "{\"namespace\":\"unknown\"}")).path("rows").size());

        assertRefused(call(t, "GET", "/api/v1/resources/kv/namespaces?x=1", null), 400, "kv_bad_request", "kv_no_query_string");
        assertRefused(call(t, "POST", "/api/v1/resources/kv/list?after=j/2", "{\"namespace\":\"jobs\"}"), 400,
                "kv_bad_request", "kv_no_query_string");
        assertRefused(call(t, "POST", "/api/v1/resources/kv/list", "{}"), 400, "kv_bad_request", "kv_bad_namespace");
        assertRefused(call(t, "POST", "/api/v1/resources/kv/list", "{\"namespace\":\"jobs\",\"keysOnly\":\"yes\"}"), 400,
                "kv_bad_request", "kv_bad_body");
        assertRefused(call(t, "POST", "/api/v1/resources/kv/list", "[]"), 400, "kv_bad_request", "kv_bad_body");
    }

    // ---------------------------------------------------------------- kill switch

    @Test
    void theKillSwitchIsSeenByEveryBrokerAndAnswers503() {
        String t = tenant();
        JsonNode state = ok(call(null, "GET", "/api/v1/system/kv-timers", null));
        assertTrue(state.path("kvEnabled").asBoolean() && state.path("timersScheduleEnabled").asBoolean()
                && state.path("timersFireEnabled").asBoolean(), "absent rows mean on: " + state);
        assertEquals(0, state.path("quotaTenants").asInt());
        assertTrue(state.has("quotaAgeMs") && state.path("quotaAgeMs").isNull());
        assertEquals(0, state.path("quotaHot").asInt());

        Reply none = call(null, "POST", "/api/v1/system/kv-timers", "{}");
        assertEquals(400, none.status());
        assertEquals("at least one of kv, timersSchedule, timersFire (boolean) is required", none.json().path("error").asText());
        assertEquals(400, call(null, "POST", "/api/v1/system/kv-timers", "{\"kv\":\"off\"}").status());

        try (Broker other = BrokerFixture.start(db, TENANCY)) {
            assertEquals(200, call(other, t, "PUT", "/api/v1/kv/sw/k", "{\"value\":1,\"forever\":true}").status());
            JsonNode off = ok(call(null, "POST", "/api/v1/system/kv-timers", "{\"kv\":false}"));
            assertFalse(off.path("kvEnabled").asBoolean());
            assertTrue(off.path("timersScheduleEnabled").asBoolean(), "the switches not named are left alone");
            assertTrue(off.path("mirrored").asBoolean());
            assertEquals("kv/timers runtime switches updated", off.path("message").asText());

            Reply here = call(t, "GET", "/api/v1/kv/sw/k", null);
            assertRefused(here, 503, "kv_disabled", "kv_disabled");
            assertEquals("1", here.header("retry-after"));
            assertRefused(call(t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"sw\",\"key\":\"k\"}]"), 503, "kv_disabled", null);
            assertRefused(call(t, "GET", "/api/v1/resources/kv/namespaces", null), 503, "kv_disabled", null);
            assertRefused(call(t, "POST", "/api/v1/resources/kv/list", "{\"namespace\":\"sw\"}"), 503, "kv_disabled", null);
            // A malformed call is still the client's mistake first, as the reference orders it.
            assertRefused(call(t, "GET", "/api/v1/kv/sw/k?x=1", null), 400, "kv_bad_request", "kv_no_query_string");

            Reply there = eventually(() -> call(other, t, "GET", "/api/v1/kv/sw/k", null), r -> r.status() == 503);
            assertRefused(there, 503, "kv_disabled", "kv_disabled");
            assertEquals("1", there.header("retry-after"));
            assertFalse(ok(call(other, null, "GET", "/api/v1/system/kv-timers", null)).path("kvEnabled").asBoolean());

            JsonNode schedule = ok(call(other, null, "POST", "/api/v1/system/kv-timers", "{\"timersSchedule\":false,\"kv\":true}"));
            assertTrue(schedule.path("kvEnabled").asBoolean());
            assertFalse(schedule.path("timersScheduleEnabled").asBoolean());
            assertEquals(200, call(other, t, "GET", "/api/v1/kv/sw/k", null).status());
            Reply back = eventually(() -> call(t, "GET", "/api/v1/kv/sw/k", null), r -> r.status() == 200);
            assertTrue(back.json().path("found").asBoolean(), back.body());
            JsonNode fire = ok(call(null, "POST", "/api/v1/system/kv-timers", "{\"timersFire\":false,\"timersSchedule\":true}"));
            assertNotEquals("kv/timers runtime switches updated", fire.path("message").asText());
            ok(call(null, "POST", "/api/v1/system/kv-timers", "{\"timersFire\":true}"));
        }
        JsonNode restored = ok(call(null, "GET", "/api/v1/system/kv-timers", null));
        assertTrue(restored.path("kvEnabled").asBoolean() && restored.path("timersScheduleEnabled").asBoolean()
                && restored.path("timersFireEnabled").asBoolean(), restored.toString());
    }

    @Test
    void theBrokersLimitsAreItsSettings() {
        try (Broker small = BrokerFixture.start(db, Map.of("QUEEN_KV_MAX_VALUE_BYTES", "16", "QUEEN_KV_PREFIX_LIMIT", "2",
                "QUEEN_KV_MAX_OPS_PER_CALL", "3"))) {
            String t = "00000000-0000-0000-0000-000000000001";
            assertRefused(call(small, t, "PUT", "/api/v1/kv/lim/k", "{\"value\":\"" + "x".repeat(15) + "\",\"forever\":true}"),
                    413, "payload_too_large", "kv_value_too_large");
            for (String k : List.of("a", "b", "c")) {
                assertEquals(200, call(small, t, "PUT", "/api/v1/kv/lim/p" + k, "{\"value\":1,\"forever\":true}").status());
            }
            JsonNode page = ok(call(small, t, "POST", "/api/v1/kv", "[{\"op\":\"getPrefix\",\"ns\":\"lim\",\"prefix\":\"p\","
                    + "\"limit\":100}]")).path("results").get(0);
            assertEquals(2, page.path("rows").size(), "clamped to QUEEN_KV_PREFIX_LIMIT");
            assertTrue(page.path("truncated").asBoolean());
            assertRefused(call(small, t, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"a\",\"key\":\"1\"},"
                    + "{\"op\":\"get\",\"ns\":\"a\",\"key\":\"2\"},{\"op\":\"get\",\"ns\":\"a\",\"key\":\"3\"},"
                    + "{\"op\":\"get\",\"ns\":\"a\",\"key\":\"4\"}]"), 400, "kv_bad_request", "kv_too_many_ops");
        }
    }

    // ---------------------------------------------------------------- concurrency

    /**
     * Eight clients, each making calls that increment the same four counters and overwrite the same
     * four keys, every call listing them in its own random order. The procedure takes the rows in one
     * order whatever the input's, so no call waits on a cycle: every call answers 200 (a deadlock would
     * be a 503 after deadlock_timeout) and every increment is counted exactly once.
     */
    @Test
    void concurrentCallsOverSharedKeysInAnyOrderNeverDeadlockAndCountExactly() throws Exception {
        String t = tenant();
        int clients = 8;
        int calls = 40;
        List<String> counters = List.of("c1", "c2", "c3", "c4");
        List<String> shared = List.of("p1", "p2", "p3", "p4");
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<List<Reply>>> work = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                long seed = 7919L * (c + 1);
                int client = c;
                work.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    List<Reply> failures = new ArrayList<>();
                    for (int i = 0; i < calls; i++) {
                        List<String> ops = new ArrayList<>();
                        for (String k : counters) {
                            ops.add("{\"op\":\"incr\",\"ns\":\"conc\",\"key\":\"" + k + "\",\"delta\":1,\"forever\":true}");
                        }
                        for (String k : shared) {
                            ops.add("{\"op\":\"put\",\"ns\":\"conc\",\"key\":\"" + k + "\",\"value\":{\"by\":" + client
                                    + ",\"i\":" + i + "},\"ttlSeconds\":600}");
                        }
                        Collections.shuffle(ops, random);
                        Reply r = call(t, "POST", "/api/v1/kv", "[" + String.join(",", ops) + "]");
                        if (r.status() != 200) {
                            failures.add(r);
                        }
                    }
                    return failures;
                }));
            }
            for (Future<List<Reply>> f : work) {
                List<Reply> failed = f.get(5, TimeUnit.MINUTES);
                assertTrue(failed.isEmpty(), "calls failed: " + failed);
            }
        } finally {
            pool.shutdownNow();
        }
        JsonNode totals = batch(t, "{\"op\":\"getMany\",\"ns\":\"conc\",\"keys\":[\"c1\",\"c2\",\"c3\",\"c4\"]}").get(0);
        assertEquals(4, totals.path("rows").size(), totals.toString());
        for (JsonNode row : totals.path("rows")) {
            assertEquals(clients * calls, row.path("value").asInt(), row.toString());
        }
    }
}
