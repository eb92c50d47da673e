package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV, timer, sweeper and streams families of /metrics/prometheus on real brokers over a real
 * PostgreSQL: each path is driven, the exposition read back with the strict parser, and the
 * series asserted to move by exactly what was done.
 */
class SurfaceMetricsIT {
    private static final String A = "0000000a-0000-4000-8000-0000000000a1";
    private static final String B = "0000000b-0000-4000-8000-0000000000b2";

    /** One scrape of {@code http}'s broker, parsed strictly. */
    private static StrictPrometheusParser.Exposition scrape(HttpProbe http) {
        Reply r = http.get("/metrics/prometheus");
        assertEquals(200, r.status(), r.body());
        return StrictPrometheusParser.parse(r.body());
    }

    private static double value(StrictPrometheusParser.Exposition e, String name, String... labels) {
        Double v = e.value(name, labels);
        assertNotNull(v, name + " " + String.join(",", labels) + " missing");
        return v;
    }

    /** How much one series moved across {@code action}. */
    private static double delta(HttpProbe http, Runnable action, String name, String... labels) {
        double before = value(scrape(http), name, labels);
        action.run();
        return value(scrape(http), name, labels) - before;
    }

    private static long count(DatabaseSettings db, String sql) throws Exception {
        try (java.sql.Connection c = TestPostgres.connect(db); java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void status(int expected, Supplier<Reply> call) {
        Reply r = call.get();
        assertEquals(expected, r.status(), r.body());
    }

    @Test
    void everyFamilyIsThereOnAFreshBrokerAndKvOpsCountByPathOutcomeAndRung() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("surface_kv");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true",
                "QUEEN_KV_TRUSTED_PROXY", "true", "QUEEN_SWEEPER", "false", "QUEEN_KV_QUOTA_REFRESH_MS", "1000"))) {
            HttpProbe http = new HttpProbe(broker.port());
            StrictPrometheusParser.Exposition fresh = scrape(http);
            for (String family : new String[] {"queen_kv_ops_total", "queen_kv_refused_total", "queen_timers_ops_total",
                    "queen_timers_schedule_rejected_total", "queen_timers_fired_total", "queen_timers_fire_failures_total",
                    "queen_timers_dlq_total", "queen_timers_fire_lateness_seconds", "queen_sweeper_rows_total",
                    "queen_kv_usage_runs_total", "queen_streams_cycle_total", "queen_streams_state_ops_total",
                    "queen_streams_sink_push_items_total"}) {
                assertTrue(fresh.hasFamily(family), family + " missing on a fresh broker");
            }
            assertEquals("histogram", fresh.types().get("queen_timers_fire_lateness_seconds"));
            assertEquals(0, value(fresh, "queen_kv_ops_total", "op", "put", "result", "applied"));
            assertEquals(0, value(fresh, "queen_timers_fire_lateness_seconds_count"));
            for (String line : http.get("/metrics/prometheus").body().split("\n")) {
                if (line.startsWith("queen_kv") || line.startsWith("queen_timers") || line.startsWith("queen_streams")
                        || line.startsWith("queen_sweeper")) {
                    assertFalse(line.contains("tenant=") || line.contains("queue=") || line.contains("key="),
                            "an unbounded label: " + line);
                }
            }

            String put = "[{\"op\":\"put\",\"ns\":\"g\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}]";
            String get = "[{\"op\":\"get\",\"ns\":\"g\",\"key\":\"k\"}]";
            assertEquals(1, delta(http, () -> status(403, () -> http.call(A, "POST", "/api/v1/kv", put)),
                    "queen_kv_refused_total", "reason", "feature_gated"));
            status(200, () -> http.post("/api/v1/system/kv-timers", "{\"kv\":false}"));
            assertEquals(1, delta(http, () -> status(503, () -> http.call(A, "POST", "/api/v1/kv", put)),
                    "queen_kv_refused_total", "reason", "disabled"));
            status(200, () -> http.post("/api/v1/system/kv-timers", "{\"kv\":true}"));

            // B writes at most 1 a second (a burst of 2).
            BrokerFixture.sql(db, "INSERT INTO queen.kv_quota (tenant_id, max_rows, max_writes_per_sec) VALUES ('"
                    + A + "', 100, NULL), ('" + B + "', NULL, 1)");
            await().atMost(10, TimeUnit.SECONDS).until(() -> http.call(B, "POST", "/api/v1/kv", get).status() == 200);

            StrictPrometheusParser.Exposition before = scrape(http);
            status(200, () -> http.call(A, "POST", "/api/v1/kv", put));
            status(200, () -> http.call(A, "POST", "/api/v1/kv", get));
            // Not applied, answered: putIfAbsent over a live key.
            Reply lost = http.call(A, "POST", "/api/v1/kv",
                    "[{\"op\":\"putIfAbsent\",\"ns\":\"g\",\"key\":\"k\",\"value\":2,\"ttlSeconds\":60}]");
            assertEquals(200, lost.status(), lost.body());
            // A required precondition lost: the whole call rolls back, both operations rejected.
            Reply required = http.call(A, "POST", "/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"g\",\"key\":\"k\"},"
                    + "{\"op\":\"put\",\"ns\":\"g\",\"key\":\"k\",\"value\":3,\"ttlSeconds\":60,\"expect\":987654,"
                    + "\"required\":true}]");
            assertEquals("kv_precondition", required.json().path("reason").asText(), required.body());
            // A rider counts as the same operations.
            Reply rider = http.call(A, "POST", "/api/v1/transaction", "{\"operations\":[],\"kv\":"
                    + "[{\"op\":\"incr\",\"ns\":\"g\",\"key\":\"n\",\"delta\":1,\"ttlSeconds\":60}]}");
            assertEquals(200, rider.status(), rider.body());
            StrictPrometheusParser.Exposition after = scrape(http);
            assertEquals(1, value(after, "queen_kv_ops_total", "op", "put", "result", "applied")
                    - value(before, "queen_kv_ops_total", "op", "put", "result", "applied"));
            assertEquals(2, value(after, "queen_kv_ops_total", "op", "put", "result", "rejected")
                    - value(before, "queen_kv_ops_total", "op", "put", "result", "rejected"), "putIfAbsent, required put");
            assertEquals(1, value(after, "queen_kv_ops_total", "op", "get", "result", "applied")
                    - value(before, "queen_kv_ops_total", "op", "get", "result", "applied"));
            assertEquals(1, value(after, "queen_kv_ops_total", "op", "get", "result", "rejected")
                    - value(before, "queen_kv_ops_total", "op", "get", "result", "rejected"), "rolled back with the put");
            assertEquals(1, value(after, "queen_kv_ops_total", "op", "incr", "result", "applied")
                    - value(before, "queen_kv_ops_total", "op", "incr", "result", "applied"));
            assertEquals(0, value(after, "queen_kv_ops_total", "op", "put", "result", "error"));

            BrokerFixture.sql(db, "UPDATE queen.kv_quota SET max_rows = 2 WHERE tenant_id = '" + A + "'");
            BrokerFixture.sql(db, "INSERT INTO queen.kv_usage (tenant_id, computed_at, kv_rows) VALUES ('" + A
                    + "', now(), 2)");
            await().atMost(10, TimeUnit.SECONDS).until(() -> http.call(A, "POST", "/api/v1/kv", put).status() == 403);
            assertEquals(1, delta(http, () -> status(403, () -> http.call(A, "POST", "/api/v1/kv", put)),
                    "queen_kv_refused_total", "reason", "quota"));

            // B's burst goes through, then one 429.
            double limited = value(scrape(http), "queen_kv_refused_total", "reason", "rate_limited");
            int answered429 = 0;
            for (int i = 0; i < 6 && answered429 == 0; i++) {
                if (http.call(B, "POST", "/api/v1/kv", put).status() == 429) {
                    answered429++;
                }
            }
            assertEquals(1, answered429);
            assertEquals(1, value(scrape(http), "queen_kv_refused_total", "reason", "rate_limited") - limited);
        }
    }

    @Test
    void timerSchedulesFiresFailuresLatenessAndTheSweeperLagCount() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("surface_timers");
        try (Broker broker = BrokerFixture.start(db, Map.of("METRICS_FLUSH_MS", "3600000",
                "QUEEN_SWEEPER_MAX_SLEEP_MS", "100", "QUEEN_SWEEPER_IDLE_MAX_SLEEP_MS", "100",
                "QUEEN_SWEEPER_MAX_ATTEMPTS", "2", "QUEEN_SWEEPER_BACKOFF_MIN_MS", "10",
                "QUEEN_SWEEPER_BACKOFF_MAX_MS", "20", "QUEEN_TIMERS_MAX_HORIZON_S", "3600"))) {
            HttpProbe http = new HttpProbe(broker.port());
            StrictPrometheusParser.Exposition before = scrape(http);
            TimerRoutesIT.batch(http, TimerRoutesIT.schedule("tm", "a", 600_000, "ta", "{}"),
                    TimerRoutesIT.schedule("tm", "b", 600_000, "tb", "{}"),
                    TimerRoutesIT.schedule("tm", "c", 600_000, "tc", "{}"));
            TimerRoutesIT.batch(http, TimerRoutesIT.schedule("tm", "a", 500_000, "ta2", "{}")
                            .replace("\"schedule\"", "\"reschedule\""),
                    "{\"op\":\"cancel\",\"queue\":\"tm\",\"timerKey\":\"b\"}",
                    "{\"op\":\"cancel\",\"queue\":\"tm\",\"timerKey\":\"nobody\"}");
            // Held by a broker (a claim with a running lease): out of the caller's hands.
            BrokerFixture.sql(db, "UPDATE queen.log_timers SET claim_token = gen_random_uuid(),"
                    + " claimed_until = now() + interval '1 hour' WHERE timer_key = 'c'");
            assertEquals(200, http.delete("/api/v1/timers/tm/c").status());
            Reply horizon = http.post("/api/v1/timers", "{\"operations\":["
                    + TimerRoutesIT.schedule("tm", "far", 7_200_000, "tf", "{}") + ","
                    + TimerRoutesIT.schedule("tm", "near", 1_000, "tn", "{}") + "]}");
            assertEquals(403, horizon.status(), horizon.body());
            assertEquals(400, http.post("/api/v1/timers", "{\"operations\":[{\"op\":\"schedule\",\"queue\":\"tm\"}]}")
                    .status());
            Reply rider = http.post("/api/v1/transaction", "{\"operations\":[],\"timers\":["
                    + TimerRoutesIT.schedule("tm", "r", 600_000, "tr", "{}") + "]}");
            assertEquals(200, rider.status(), rider.body());
            StrictPrometheusParser.Exposition after = scrape(http);
            Map<String, Integer> expected = Map.of("scheduled", 4, "rescheduled", 1, "cancelled", 1, "absent", 1,
                    "too_late", 1, "refused", 3);
            expected.forEach((result, n) -> assertEquals((double) n, value(after, "queen_timers_ops_total", "result", result)
                    - value(before, "queen_timers_ops_total", "result", result), result));
            assertEquals(1, value(after, "queen_timers_schedule_rejected_total", "reason", "horizon"));
            assertEquals(1, value(after, "queen_timers_schedule_rejected_total", "reason", "shape"));

            // Five due 5 s ago, one whose txn a push already wrote, one whose payload cannot be read.
            BrokerFixture.sql(db, "DELETE FROM queen.log_timers");
            String[] due = new String[5];
            for (int i = 0; i < 5; i++) {
                due[i] = TimerRoutesIT.schedule("tf_q", "d" + i, -5_000, "td" + i, "{\"i\":" + i + "}");
            }
            Reply pushed = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"tf_q\",\"transactionId\":\"dup-1\","
                    + "\"payload\":{\"p\":1}}]}");
            assertEquals(201, pushed.status(), pushed.body());
            status(200, () -> http.post("/api/v1/system/kv-timers", "{\"timersFire\":false}"));
            TimerRoutesIT.batch(http, due);
            TimerRoutesIT.batch(http, TimerRoutesIT.schedule("tf_q", "dup", -5_000, "dup-1", "{}"),
                    TimerRoutesIT.schedule("tf_q", "poison", 600_000, "tp", "{}"));
            BrokerFixture.sql(db, "UPDATE queen.log_timers SET payload_zstd = true, deliver_at = now() - interval '1 s'"
                    + " WHERE timer_key = 'poison'");

            // The fire is off: the metrics loop's sample sees them due and late.
            await().atMost(15, TimeUnit.SECONDS).until(() -> {
                StrictPrometheusParser.Exposition e = scrape(http);
                return e.value("queen_timers_due") != null && e.value("queen_timers_due") == 7
                        && e.value("queen_timers_oldest_late_seconds") >= 5;
            });
            assertEquals(0, value(scrape(http), "queen_timers_due_capped"));

            StrictPrometheusParser.Exposition firing = scrape(http);
            status(200, () -> http.post("/api/v1/system/kv-timers", "{\"timersFire\":true}"));
            await().atMost(20, TimeUnit.SECONDS).until(() -> value(scrape(http), "queen_timers_dlq_total") >= 1);
            await().atMost(15, TimeUnit.SECONDS).until(() -> value(scrape(http), "queen_timers_due") == 0);
            StrictPrometheusParser.Exposition fired = scrape(http);
            assertEquals(5, value(fired, "queen_timers_fired_total", "result", "fired")
                    - value(firing, "queen_timers_fired_total", "result", "fired"));
            assertEquals(1, value(fired, "queen_timers_fired_total", "result", "duplicate")
                    - value(firing, "queen_timers_fired_total", "result", "duplicate"));
            assertEquals(6, value(fired, "queen_sweeper_rows_total", "phase", "fire")
                    - value(firing, "queen_sweeper_rows_total", "phase", "fire"));
            assertEquals(2, value(fired, "queen_timers_fire_failures_total", "class", "permanent"),
                    "QUEEN_SWEEPER_MAX_ATTEMPTS=2 permanent failures, then the DLQ");
            assertEquals(1, value(fired, "queen_timers_dlq_total"));
            assertEquals(6, value(fired, "queen_timers_fire_lateness_seconds_count"));
            assertEquals(0, value(fired, "queen_timers_fire_lateness_seconds_bucket", "le", "5"),
                    "every one was due at least 5 s before its claim");
            assertEquals(6, value(fired, "queen_timers_fire_lateness_seconds_bucket", "le", "1800"));
            assertTrue(value(fired, "queen_timers_fire_lateness_seconds_sum") >= 30);
            assertEquals(0, value(fired, "queen_timers_oldest_late_seconds"));
        }
    }

    @Test
    void theKvSweeperCountsPrunedRowsTheBacklogAndUsageRuns() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("surface_kv_sweep");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_KV_EXPIRE_EVERY_MS", "100",
                "QUEEN_KV_EXPIRE_BATCH", "40", "QUEEN_KV_USAGE_EVERY_MS", "1000"))) {
            HttpProbe http = new HttpProbe(broker.port());
            await().atMost(10, TimeUnit.SECONDS).until(() -> value(scrape(http), "queen_kv_usage_runs_total",
                    "result", "measured") + value(scrape(http), "queen_kv_usage_runs_total", "result", "skipped") >= 1);
            double pruned = value(scrape(http), "queen_sweeper_rows_total", "phase", "kv_expire");
            BrokerFixture.sql(db, "INSERT INTO queen.kv (tenant_id, namespace, key, value, version, expires_at)"
                    + " SELECT '" + A + "', 'g', 'old' || i, to_jsonb(i), nextval('queen.kv_version_seq'),"
                    + " now() - interval '1 second' FROM generate_series(1, 150) i");
            BrokerFixture.sql(db, "INSERT INTO queen.kv (tenant_id, namespace, key, value, version, expires_at)"
                    + " SELECT '" + A + "', 'g', 'live' || i, to_jsonb(i), nextval('queen.kv_version_seq'), NULL"
                    + " FROM generate_series(1, 3) i");
            await().atMost(15, TimeUnit.SECONDS).until(() ->
                    value(scrape(http), "queen_sweeper_rows_total", "phase", "kv_expire") - pruned == 150);
            StrictPrometheusParser.Exposition e = scrape(http);
            assertEquals(0, value(e, "queen_kv_expired_not_pruned"));
            assertEquals(0, value(e, "queen_kv_expired_not_pruned_capped"));
            assertEquals(3, count(db, "SELECT count(*) FROM queen.kv"), "the live rows stay");
            // A rollup after the insert measures the tenant that holds them.
            await().atMost(10, TimeUnit.SECONDS).until(() ->
                    value(scrape(http), "queen_sweeper_rows_total", "phase", "usage") >= 1);
            assertEquals(1, count(db, "SELECT count(*) FROM queen.kv_usage WHERE tenant_id = '" + A + "'"));
        }
    }

    @Test
    void streamsCyclesCountByResultWithTheirStateOpsAndSinkItems() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("surface_streams");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_SWEEPER", "false"))) {
            HttpProbe http = new HttpProbe(broker.port());
            Reply reg = http.post("/streams/v1/queries", "{\"name\":\"m.q\",\"source_queue\":\"s_src\","
                    + "\"sink_queue\":\"s_sink\",\"config_hash\":\"h1\"}");
            assertEquals(200, reg.status(), reg.body());
            String q = reg.json().get("query_id").asText();
            http.push("s_src", "p", "{\"v\":1}", "{\"v\":2}");
            Reply popped = http.get("/api/v1/pop/queue/s_src?batch=10&consumerGroup=g&subscriptionMode=all&wait=false");
            assertEquals(200, popped.status(), popped.body());
            JsonNode batch = popped.json().get("messages");
            String pid = batch.get(0).get("partitionId").asText();
            JsonNode last = batch.get(batch.size() - 1);
            String ack = "{\"transactionId\":\"" + last.get("transactionId").asText() + "\",\"leaseId\":\""
                    + last.get("leaseId").asText() + "\",\"status\":\"completed\",\"count\":" + batch.size() + "}";
            StrictPrometheusParser.Exposition before = scrape(http);

            Reply ok = http.post("/streams/v1/cycle", "{\"query_id\":\"" + q + "\",\"partition_id\":\"" + pid
                    + "\",\"consumer_group\":\"g\",\"state_ops\":[{\"type\":\"upsert\",\"key\":\"a\",\"value\":1},"
                    + "{\"type\":\"upsert\",\"key\":\"b\",\"value\":2},{\"type\":\"delete\",\"key\":\"z\"}],"
                    + "\"push_items\":[{\"queue\":\"s_sink\",\"payload\":{\"x\":1},\"transactionId\":\"sink-1\"},"
                    + "{\"queue\":\"s_sink\",\"payload\":{\"x\":2},\"transactionId\":\"sink-2\"}],"
                    + "\"ack\":" + ack + ",\"release_lease\":true}");
            assertEquals(200, ok.status(), ok.body());
            Reply again = http.post("/streams/v1/cycle", "{\"query_id\":\"" + q + "\",\"partition_id\":\"" + pid
                    + "\",\"consumer_group\":\"g\",\"state_ops\":[],\"push_items\":[{\"queue\":\"s_sink\","
                    + "\"payload\":{\"x\":1},\"transactionId\":\"sink-1\"}],\"ack\":null,\"release_lease\":true}");
            assertEquals(200, again.status(), again.body());
            Reply stale = http.post("/streams/v1/cycle", "{\"query_id\":\"" + q + "\",\"partition_id\":\"" + pid
                    + "\",\"consumer_group\":\"g\",\"state_ops\":[],\"push_items\":[],\"ack\":" + ack.replace(
                    last.get("leaseId").asText(), UUID.randomUUID().toString()) + ",\"release_lease\":true}");
            assertEquals(409, stale.status(), stale.body());
            Reply noQuery = http.post("/streams/v1/cycle", "{\"query_id\":\"" + UUID.randomUUID() + "\",\"partition_id\":\""
                    + pid + "\",\"consumer_group\":\"g\",\"state_ops\":[],\"push_items\":[],\"ack\":null}");
            assertEquals(404, noQuery.status(), noQuery.body());

            StrictPrometheusParser.Exposition after = scrape(http);
            assertEquals(2, value(after, "queen_streams_cycle_total", "result", "success")
                    - value(before, "queen_streams_cycle_total", "result", "success"));
            assertEquals(1, value(after, "queen_streams_cycle_total", "result", "lease_invalid")
                    - value(before, "queen_streams_cycle_total", "result", "lease_invalid"));
            assertEquals(1, value(after, "queen_streams_cycle_total", "result", "query_not_found")
                    - value(before, "queen_streams_cycle_total", "result", "query_not_found"));
            assertEquals(2, value(after, "queen_streams_state_ops_total", "op", "upsert")
                    - value(before, "queen_streams_state_ops_total", "op", "upsert"));
            assertEquals(1, value(after, "queen_streams_state_ops_total", "op", "delete")
                    - value(before, "queen_streams_state_ops_total", "op", "delete"));
            assertEquals(2, value(after, "queen_streams_sink_push_items_total", "result", "queued")
                    - value(before, "queen_streams_sink_push_items_total", "result", "queued"));
            assertEquals(1, value(after, "queen_streams_sink_push_items_total", "result", "duplicate")
                    - value(before, "queen_streams_sink_push_items_total", "result", "duplicate"));
            assertNull(after.value("queen_streams_cycle_total", "result", "success", "queue", "s_src"));
        }
    }
}
