package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV sweeper's SQL (026), the quota poll (027), the sweeper loop, and the refusal ladder on the
 * KV routes and the transaction rider, on a real PostgreSQL (broker/DESIGN.md, KV sweeper and quotas).
 */
class KvGuardIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String A = "0000000a-0000-4000-8000-000000000001";
    private static final String B = "0000000b-0000-4000-8000-000000000002";

    private static JsonNode query(DatabaseSettings db, String sql) throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return MAPPER.readTree(rs.getString(1));
        }
    }

    private static long count(DatabaseSettings db, String sql) throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void insertKv(DatabaseSettings db, String tenant, String prefix, int n, String expiresAt) {
        BrokerFixture.sql(db, "INSERT INTO queen.kv (tenant_id, namespace, key, value, version, expires_at)"
                + " SELECT '" + tenant + "', 'g', '" + prefix + "' || i, to_jsonb(i), nextval('queen.kv_version_seq'), "
                + expiresAt + " FROM generate_series(1, " + n + ") i");
    }

    private static void await(Callable<Boolean> condition, String what) {
        Awaitility.await(what).atMost(Duration.ofSeconds(8)).pollInterval(Duration.ofMillis(50)).until(condition);
    }

    @Test
    void theSqlPrunesExpiredRowsInStepsSkipsHeldRowsAndMeasuresUsage() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("kv_guard_sql");
        try (Broker ignored = BrokerFixture.start(db, Map.of("QUEEN_SWEEPER", "false"))) {
            insertKv(db, A, "old", 150, "now() - interval '1 second'");
            insertKv(db, A, "live", 5, "now() + interval '1 hour'");
            insertKv(db, B, "forever", 3, "NULL");
            String shards = "(SELECT array_agg(i::smallint) FROM generate_series(0, 63) i)";
            JsonNode step = query(db, "SELECT queen.kv_expire_step_v1(" + shards + ", 100)::text");
            assertEquals(100, step.get("deleted").asInt(), step.toString());
            assertFalse(step.get("done").asBoolean(), "a full step is not the end: " + step);
            assertEquals(50, step.get("backlog").asInt());

            try (Connection holder = TestPostgres.connect(db); Statement st = holder.createStatement()) {
                holder.setAutoCommit(false);
                try (ResultSet rs = st.executeQuery("SELECT key FROM queen.kv WHERE key LIKE 'old%' ORDER BY key LIMIT 1 FOR UPDATE")) {
                    rs.next();
                }
                BrokerFixture.sql(db, "SET lock_timeout = '2s'");
                long t0 = System.nanoTime();
                JsonNode rest = query(db, "SELECT queen.kv_expire_step_v1(" + shards + ", 100)::text");
                assertTrue(System.nanoTime() - t0 < 1_500_000_000L, "the prune never waits on a held row");
                assertEquals(49, rest.get("deleted").asInt(), rest.toString());
                assertTrue(rest.get("done").asBoolean());
                holder.rollback();
            }
            assertEquals(1, count(db, "SELECT count(*) FROM queen.kv WHERE key LIKE 'old%'"), "the held row waits a cycle");
            assertEquals(8, count(db, "SELECT count(*) FROM queen.kv WHERE key NOT LIKE 'old%'"), "live rows stay");

            BrokerFixture.sql(db, "INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                    + " VALUES ('" + B + "', 'q', 'k', now() + interval '1 hour', 't', gen_random_uuid(), '\\x7b7d')");
            JsonNode usage = query(db, "SELECT queen.kv_usage_step_v1(0)::text");
            assertFalse(usage.get("skipped").asBoolean());
            assertEquals(2, usage.get("tenants").asInt(), usage.toString());
            assertEquals(5, count(db, "SELECT kv_rows FROM queen.kv_usage WHERE tenant_id = '" + A + "'"),
                    "live rows only: the expired row left is not counted");
            assertEquals(3, count(db, "SELECT kv_rows FROM queen.kv_usage WHERE tenant_id = '" + B + "'"));
            assertEquals(1, count(db, "SELECT timer_rows FROM queen.kv_usage WHERE tenant_id = '" + B + "'"));
            assertTrue(count(db, "SELECT kv_bytes FROM queen.kv_usage WHERE tenant_id = '" + A + "'") > 0);
            assertTrue(query(db, "SELECT queen.kv_usage_step_v1(60000)::text").get("skipped").asBoolean(),
                    "measured a moment ago: another broker would skip");
            BrokerFixture.sql(db, "DELETE FROM queen.kv WHERE tenant_id = '" + A + "'");
            query(db, "SELECT queen.kv_usage_step_v1(0)::text");
            assertEquals(0, count(db, "SELECT kv_rows FROM queen.kv_usage WHERE tenant_id = '" + A + "'"),
                    "a tenant that emptied is measured as zero, not left at its old usage");

            BrokerFixture.sql(db, "INSERT INTO queen.kv_quota (tenant_id, max_rows) VALUES"
                    + " ('00000000-0000-4000-8000-00000000000c', 10), ('" + B + "', 4)");
            JsonNode quota = query(db, "SELECT queen.kv_quota_refresh_v1(10)::text");
            assertEquals(3, quota.size(), quota.toString());
            assertEquals(B, quota.get(0).get("tenant").asText(), "granted and nearest its limit first: " + quota);
            assertTrue(quota.get(0).get("granted").asBoolean());
            assertEquals(4, quota.get(0).get("maxRows").asInt());
            assertEquals(3, quota.get(0).get("kvRows").asInt());
            assertTrue(quota.get(0).get("computedAtMs").asLong() > 0);
            assertEquals(0, quota.get(1).get("kvRows").asInt(), "a granted tenant with no usage is listed: " + quota);
            assertFalse(quota.get(2).get("granted").asBoolean(), "usage without a quota row comes last");
            assertTrue(quota.get(2).get("maxRows").isNull());
            assertEquals(1, query(db, "SELECT queen.kv_quota_refresh_v1(1)::text").size(), "capped");
        }
    }

    @Test
    void theSweeperPrunesExpiredKeysOnItsOwn() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("kv_guard_sweeper");
        try (Broker ignored = BrokerFixture.start(db, Map.of("QUEEN_KV_EXPIRE_EVERY_MS", "50", "QUEEN_KV_EXPIRE_BATCH", "40",
                "QUEEN_KV_USAGE_EVERY_MS", "1000"))) {
            insertKv(db, A, "old", 300, "now() - interval '1 second'");
            insertKv(db, A, "live", 2, "now() + interval '1 hour'");
            await(() -> count(db, "SELECT count(*) FROM queen.kv") == 2, "the sweeper to prune 300 expired keys");
            await(() -> count(db, "SELECT count(*) FROM queen.kv_usage WHERE tenant_id = '" + A + "' AND kv_rows = 2") == 1,
                    "the sweeper's first usage measurement");
        }
    }

    @Test
    void theLadderRefusesInOrderSwitchGrantQuotaRate() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("kv_guard_ladder");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "QUEEN_SWEEPER", "false", "QUEEN_KV_QUOTA_REFRESH_MS", "1000", "QUEEN_KV_WRITE_RATE", "1",
                "QUEEN_KV_WRITE_BURST", "3"))) {
            HttpProbe http = new HttpProbe(broker.port());
            String put = "[{\"op\":\"put\",\"ns\":\"g\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}]";
            String get = "[{\"op\":\"get\",\"ns\":\"g\",\"key\":\"k\"}]";

            Reply gated = http.call(A, "POST", "/api/v1/kv", put);
            assertEquals(403, gated.status(), gated.body());
            assertEquals("feature_gated", gated.json().get("error").asText(), "tenancy on: no quota row, no KV");
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"kv\":false}").status());
            assertEquals(503, http.call(A, "POST", "/api/v1/kv", put).status(), "the kill switch is the outermost rung");
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"kv\":true}").status());

            BrokerFixture.sql(db, "INSERT INTO queen.kv_quota (tenant_id, max_rows) VALUES ('" + A + "', 2), ('" + B + "', NULL)");
            await(() -> http.call(A, "POST", "/api/v1/kv", put).status() == 200, "the grant to reach the broker's poll");

            BrokerFixture.sql(db, "INSERT INTO queen.kv_usage (tenant_id, computed_at, kv_rows) VALUES ('" + A + "', now(), 2)");
            await(() -> http.call(A, "POST", "/api/v1/kv", put).status() == 403, "the measured usage to block writes");
            Reply over = http.call(A, "POST", "/api/v1/kv", put);
            assertEquals("kv_quota_exceeded", over.json().get("error").asText(), over.body());
            assertEquals(200, http.call(A, "POST", "/api/v1/kv", get).status(), "reads pass over quota");
            assertEquals(200, http.call(A, "DELETE", "/api/v1/kv/g/k", (String) null).status(), "deletes pass over quota");
            Reply rider = http.call(A, "POST", "/api/v1/transaction", "{\"operations\":[],\"kv\":" + put + "}");
            assertEquals(403, rider.status(), rider.body());
            assertEquals("kv_quota_exceeded", rider.json().get("reason").asText());

            // B is granted without limits; its write rate is 1/s with a burst of 3.
            int admitted = 0;
            HttpResponse<String> limited = null;
            HttpClient client = HttpClient.newHttpClient();
            for (int i = 0; i < 6 && limited == null; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.port()
                                + "/api/v1/kv")).header("x-queen-tenant", B).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(put)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    admitted++;
                } else {
                    limited = r;
                }
            }
            assertTrue(admitted >= 3 && admitted <= 4, "the burst passes: " + admitted);
            assertEquals(429, limited.statusCode(), limited.body());
            assertEquals("rate_limited", MAPPER.readTree(limited.body()).get("error").asText());
            assertTrue(Integer.parseInt(limited.headers().firstValue("Retry-After").orElse("0")) >= 1);
            assertEquals(200, http.call(B, "POST", "/api/v1/kv", get).status(), "reads have a bucket of their own");
        }
    }
}
