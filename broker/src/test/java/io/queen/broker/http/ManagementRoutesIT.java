package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 1.5.3 reads the reference router registers on top of the older analytics: workload,
 * dlq-signatures, partition-liveness, retention's groupBy and system/shared-state. Each test
 * works in a tenant of its own (tenancy on), so the figures asserted are exactly those it set up.
 * Rows the metrics collector and the maintenance cycle would write are written directly.
 */
class ManagementRoutesIT {
    static DatabaseSettings db;
    static Broker broker;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("management_routes");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "METRICS_FLUSH_MS", "3600000", "STATS_INTERVAL_MS", "3600000"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    // ---------------------------------------------------------------- workload

    @Test
    void workloadGroupsTheTenantsQueuesAndFillsTheAxis() throws SQLException {
        String t = "11111111-0000-4000-8000-000000000001";
        configure(t, "inv", "billing", "invoice");
        configure(t, "pay", "billing", "payment");
        configure(t, "loose", null, null);
        lagRow(queueId(t, "inv"), 5, 10, 100, 400, 12, 2);
        lagRow(queueId(t, "inv"), 10, 30, 200, 900, 0, 0);
        lagRow(queueId(t, "pay"), 5, 0, 0, 5000, 7, 1);
        // Another tenant's queue of the same name must not leak in.
        String other = "11111111-0000-4000-8000-000000000002";
        configure(other, "inv", "billing", "invoice");
        lagRow(queueId(other, "inv"), 5, 999, 1, 1, 999, 9);

        JsonNode body = ok(call(t, "GET", "/api/v1/analytics/workload", null));
        assertEquals("namespace", body.path("groupBy").asText(), body.toString());
        assertEquals(1, body.path("bucketMinutes").asInt());
        int axis = body.path("buckets").size();
        assertTrue(axis >= 60 && axis <= 62, "one-minute buckets over the default hour: " + axis);

        JsonNode rows = body.path("rows");
        assertEquals(2, rows.size(), rows.toString());
        assertEquals("", rows.get(0).path("key").asText(), "keys sort, the unset namespace first");
        JsonNode billing = rows.get(1);
        assertEquals("billing", billing.path("key").asText());
        assertEquals(2, billing.path("queues").asInt());
        JsonNode w = billing.path("window");
        assertEquals(19, w.path("pushMessages").asLong());
        assertEquals(40, w.path("popMessages").asLong());
        // Pop-weighted: (10 x 100 + 30 x 200) / 40 = 175; the popless minute's 5000 is no lag sample.
        assertEquals(175, w.path("avgLagMs").asLong());
        assertEquals(900, w.path("maxLagMs").asLong());
        assertEquals(2.0, w.path("parkedAvg").asDouble(), 1e-9, "inv averages (2 + 0) / 2, pay 1");
        JsonNode series = billing.path("series");
        for (String key : List.of("push", "pop", "popEmpty", "ackFailed", "parked", "avgLagMs", "maxLagMs")) {
            assertEquals(axis, series.path(key).size(), key + " covers the axis");
        }
        assertEquals(19, sumOf(series.path("push")));
        assertEquals(axis - 2, nulls(series.path("pop")), "only two buckets had rows");
        assertEquals(2, billing.path("now").path("queuesTouched").asInt());
        assertEquals(2, billing.path("now").path("queuesActive").asInt());

        JsonNode tenant = body.path("tenant");
        assertEquals(3, tenant.path("queues").asInt(), "the tenant block counts idle queues too");
        assertEquals(19, tenant.path("window").path("pushMessages").asLong());
        assertEquals(3, tenant.path("now").path("queuesWithoutGroup").asInt());

        // groupBy=queue names each queue's labels; namespace= selects the queues without one.
        JsonNode byQueue = ok(call(t, "GET", "/api/v1/analytics/workload?groupBy=queue&namespace=billing", null));
        assertEquals(List.of("inv", "pay"), keys(byQueue.path("rows")));
        assertEquals("invoice", byQueue.path("rows").get(0).path("task").asText());
        assertEquals("billing", byQueue.path("rows").get(0).path("namespace").asText());
        assertEquals(3, byQueue.path("tenant").path("queues").asInt(), "the tenant block ignores the filters");
        JsonNode unset = ok(call(t, "GET", "/api/v1/analytics/workload?groupBy=queue&namespace=", null));
        assertEquals(List.of("loose"), keys(unset.path("rows")));

        Reply bad = call(t, "GET", "/api/v1/analytics/workload?groupBy=partition", null);
        assertEquals(400, bad.status(), bad.body());
        assertEquals("bad groupBy", bad.json().path("error").asText());
    }

    @Test
    void workloadOfATenantWithoutQueuesIsEmpty() {
        JsonNode body = ok(call("11111111-0000-4000-8000-0000000000ff", "GET", "/api/v1/analytics/workload", null));
        assertEquals(0, body.path("rows").size());
        assertTrue(body.path("tenant").isObject() && body.path("tenant").isEmpty(), body.toString());
    }

    // ---------------------------------------------------------------- dlq-signatures

    @Test
    void deadLetterSignaturesFoldTheVariablePartsOfErrors() throws SQLException {
        String t = "22222222-0000-4000-8000-000000000001";
        assertEquals(201, call(t, "POST", "/api/v1/push",
                "{\"items\":[{\"queue\":\"orders\",\"partition\":\"p1\",\"payload\":{\"n\":1}}]}").status());
        String pid = scalar("SELECT p.id::text FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.tenant_id = '" + t + "' AND q.name = 'orders'");
        deadLetter(pid, "g1", "order 01a0d2c7-e81f-702c-8734-c88401672347 failed at 2026-09-24T09:57:29.004Z after 3 tries",
                1, "3 minutes");
        deadLetter(pid, "g2", "order 7f0d2c7a-e81f-702c-8734-c88401672347 failed at 2026-09-25 after 12 tries", 4,
                "2 minutes");
        deadLetter(pid, "g1", "   ", 1, "1 minute");

        JsonNode body = ok(call(t, "GET", "/api/v1/analytics/dlq-signatures?queue=orders", null));
        assertEquals("orders", body.path("queue").asText());
        assertEquals(3, body.path("rowsNow").asInt());
        assertEquals(3, body.path("sample").asInt());
        assertEquals("[1,4]", body.path("retryCounts").toString());
        assertEquals("[\"g1\",\"g2\"]", body.path("groups").toString());
        JsonNode top = body.path("signatures").get(0);
        assertEquals("order <id> failed at <date> after <n> tries", top.path("text").asText(), body.toString());
        assertEquals(2, top.path("n").asInt());
        assertEquals(0.667, top.path("share").asDouble(), 1e-9);
        assertEquals("(no message)", body.path("signatures").get(1).path("text").asText());
        assertEquals(3, sumField(body.path("byDay"), "n"));
        assertTrue(body.path("oldest").asText().endsWith("Z"), body.toString());

        JsonNode newest = ok(call(t, "GET", "/api/v1/analytics/dlq-signatures?queue=orders&limit=1", null));
        assertEquals(3, newest.path("rowsNow").asInt(), "rowsNow counts the whole DLQ of the queue");
        assertEquals(1, newest.path("sample").asInt());
        assertEquals("(no message)", newest.path("signatures").get(0).path("text").asText(), "the newest row");

        // Another tenant sees none of it; no queue is a 400.
        assertEquals(0, ok(call("22222222-0000-4000-8000-000000000002", "GET",
                "/api/v1/analytics/dlq-signatures?queue=orders", null)).path("rowsNow").asInt());
        Reply missing = call(t, "GET", "/api/v1/analytics/dlq-signatures", null);
        assertEquals(400, missing.status(), missing.body());
        assertEquals("queue required", missing.json().path("error").asText());
    }

    // ---------------------------------------------------------------- partition-liveness

    @Test
    void partitionLivenessCountsRecentlyWrittenPartitions() throws SQLException {
        String t = "33333333-0000-4000-8000-000000000001";
        configure(t, "busy", "ops", "ingest");
        configure(t, "quiet", null, null);
        for (String p : List.of("a", "b", "c")) {
            assertEquals(201, call(t, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"busy\",\"partition\":\""
                    + p + "\",\"payload\":{}}]}").status());
        }
        assertEquals(201, call(t, "POST", "/api/v1/push",
                "{\"items\":[{\"queue\":\"quiet\",\"partition\":\"only\",\"payload\":{}}]}").status());
        String busy = queueId(t, "busy");
        BrokerFixture.sql(db, "UPDATE queen.log_partitions SET last_write_at = now() - interval '2 days',"
                + " created_at = now() - interval '3 days' WHERE queue_id = '" + busy + "' AND name = 'b'");
        BrokerFixture.sql(db, "UPDATE queen.log_partitions SET last_write_at = now() - interval '10 days',"
                + " created_at = now() - interval '10 days' WHERE queue_id = '" + busy + "' AND name = 'c'");
        ok(call(null, "POST", "/api/v1/stats/refresh", null));

        JsonNode body = ok(call(t, "GET", "/api/v1/analytics/partition-liveness", null));
        assertTrue(body.path("capturedAt").asText().endsWith("Z"), body.toString());
        JsonNode rows = body.path("rows");
        assertEquals(List.of("busy", "quiet"), names(rows), "most partitions first");
        JsonNode b = rows.get(0);
        assertEquals("ops", b.path("namespace").asText());
        assertEquals("ingest", b.path("task").asText());
        assertEquals(3, b.path("partitions").asInt());
        assertEquals(1, b.path("live1h").asInt());
        assertEquals(1, b.path("live24h").asInt());
        assertEquals(2, b.path("live7d").asInt());
        assertEquals(1, b.path("created24h").asInt());
        assertEquals(3, b.path("pending").asInt());
        assertFalse(b.path("oldestWriteAt").isNull());

        assertEquals(List.of("quiet"), names(ok(call(t, "GET",
                "/api/v1/analytics/partition-liveness?namespace=", null)).path("rows")));
        assertEquals(List.of("busy"), names(ok(call(t, "GET",
                "/api/v1/analytics/partition-liveness?limit=1", null)).path("rows")));
    }

    // ---------------------------------------------------------------- retention groupBy

    @Test
    void retentionGroupByAddsPerGroupRowsAndKeepsTheRest() throws SQLException {
        String t = "44444444-0000-4000-8000-000000000001";
        configure(t, "r1", "alpha", "x");
        configure(t, "r2", "alpha", "y");
        configure(t, "r3", "beta", "x");
        for (String q : List.of("r1", "r2", "r3")) {
            assertEquals(201, call(t, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"" + q
                    + "\",\"partition\":\"p\",\"payload\":{}}]}").status());
        }
        retentionRow(partitionOf(t, "r1"), 5, "retention");
        retentionRow(partitionOf(t, "r2"), 2, "completed_retention");
        retentionRow(partitionOf(t, "r3"), 20, "max_wait_time_eviction");

        JsonNode plain = ok(call(t, "GET", "/api/v1/analytics/retention", null));
        assertFalse(plain.has("rows"), "without groupBy the historical answer");
        assertEquals(27, plain.path("totals").path("totalMsgs").asInt());

        JsonNode byNs = ok(call(t, "GET", "/api/v1/analytics/retention?groupBy=namespace", null));
        assertEquals(plain.path("totals"), byNs.path("totals"));
        JsonNode rows = byNs.path("rows");
        assertEquals(List.of("beta", "alpha"), keys(rows), "largest totalMsgs first");
        assertEquals(2, rows.get(1).path("queues").asInt());
        assertEquals(5, rows.get(1).path("totals").path("retentionMsgs").asInt());
        assertEquals(2, rows.get(1).path("totals").path("completedRetentionMsgs").asInt());
        assertEquals(2, rows.get(1).path("totals").path("eventCount").asInt());
        assertEquals(20, rows.get(0).path("totals").path("evictionMsgs").asInt());

        assertEquals(List.of("x", "y"), keys(ok(call(t, "GET", "/api/v1/analytics/retention?groupBy=task", null))
                .path("rows")));
        assertEquals(List.of("r2"), keys(ok(call(t, "GET", "/api/v1/analytics/retention?groupBy=queue&queue=r2",
                null)).path("rows")));

        Reply bad = call(t, "GET", "/api/v1/analytics/retention?groupBy=tenant", null);
        assertEquals(400, bad.status(), bad.body());
        assertEquals("bad groupBy", bad.json().path("error").asText());
    }

    // ---------------------------------------------------------------- system/shared-state

    @Test
    void sharedStateReportsASingleNodeWithTheLiveSwitches() {
        JsonNode off = ok(call(null, "GET", "/api/v1/system/shared-state", null));
        assertFalse(off.path("enabled").asBoolean(true));
        assertEquals("single_node_segments_broker", off.path("reason").asText());
        assertFalse(off.path("maintenance_mode").asBoolean(true));
        assertFalse(off.path("pop_maintenance_mode").asBoolean(true));
        ok(call(null, "POST", "/api/v1/system/maintenance/pop", "{\"enabled\":true}"));
        try {
            assertTrue(ok(call(null, "GET", "/api/v1/system/shared-state", null)).path("pop_maintenance_mode")
                    .asBoolean(false));
        } finally {
            ok(call(null, "POST", "/api/v1/system/maintenance/pop", "{\"enabled\":false}"));
        }
    }

    // ---------------------------------------------------------------- helpers

    static Reply call(String tenant, String method, String path, String body) {
        return new HttpProbe(broker.port()).call(tenant, method, path, body);
    }

    static JsonNode ok(Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static void configure(String tenant, String queue, String namespace, String task) {
        StringBuilder b = new StringBuilder("{\"queue\":\"").append(queue).append('"');
        if (namespace != null) {
            b.append(",\"namespace\":\"").append(namespace).append('"');
        }
        if (task != null) {
            b.append(",\"task\":\"").append(task).append('"');
        }
        Reply r = call(tenant, "POST", "/api/v1/configure", b.append(",\"options\":{}}").toString());
        assertEquals(200, r.status(), r.body());
    }

    static String queueId(String tenant, String queue) throws SQLException {
        return scalar("SELECT id::text FROM queen.queues WHERE tenant_id = '" + tenant + "' AND name = '" + queue + "'");
    }

    static String partitionOf(String tenant, String queue) throws SQLException {
        return scalar("SELECT p.id::text FROM queen.log_partitions p WHERE p.queue_id = '" + queueId(tenant, queue)
                + "'");
    }

    /** One per-queue minute row the collector would have written, minutes ago. */
    static void lagRow(String queueId, int minutesAgo, long pops, long avgLag, long maxLag, long pushed, int parked) {
        BrokerFixture.sql(db, "INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id, pop_count, avg_lag_ms,"
                + " max_lag_ms, push_message_count, parked_count, lag_count) VALUES (date_trunc('minute', now())"
                + " - interval '" + minutesAgo + " minutes', '" + queueId + "', " + pops + ", " + avgLag + ", " + maxLag
                + ", " + pushed + ", " + parked + ", " + pops + ")");
    }

    static void deadLetter(String partitionId, String group, String error, int retries, String ago) {
        BrokerFixture.sql(db, "INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", transaction_id,"
                + " payload, error, retry_count, failed_at) VALUES ('" + partitionId + "', '" + group + "', 0,"
                + " gen_random_uuid()::text, '{\"k\":1}', '" + error + "', " + retries + ", now() - interval '" + ago
                + "')");
    }

    static void retentionRow(String partitionId, int deleted, String type) {
        BrokerFixture.sql(db, "INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type,"
                + " executed_at) VALUES ('" + partitionId + "', " + deleted + ", '" + type + "',"
                + " now() - interval '3 minutes')");
    }

    static List<String> keys(JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.path("key").asText()));
        return out;
    }

    static List<String> names(JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.path("queue").asText()));
        return out;
    }

    static long sumOf(JsonNode array) {
        long total = 0;
        for (JsonNode n : array) {
            total += n.asLong(0);
        }
        return total;
    }

    static long sumField(JsonNode array, String field) {
        long total = 0;
        for (JsonNode n : array) {
            total += n.path(field).asLong(0);
        }
        return total;
    }

    static int nulls(JsonNode array) {
        int n = 0;
        for (JsonNode v : array) {
            if (v.isNull()) {
                n++;
            }
        }
        return n;
    }

    static String scalar(String query) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(query);
             ResultSet rs = ps.executeQuery()) {
            assertTrue(rs.next(), query);
            return rs.getString(1);
        }
    }
}
