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

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The status family and the analytics routes on a broker with tenancy on: shapes, values against
 * a known setup, tenant scoping where the reference broker scopes, cell-wide answers where it does not, and
 * bad input. Rows the metrics collector would write are written directly (the collector is not
 * under test here and its flush is pushed out of the way).
 */
class StatusAndAnalyticsIT {
    static final String A = "aaaaaaaa-0000-4000-8000-0000000000a1";
    static final String B = "bbbbbbbb-0000-4000-8000-0000000000b1";
    static final String C = "cccccccc-0000-4000-8000-0000000000c1";

    static DatabaseSettings db;
    static Broker broker;
    static String queueA;
    static String queueB;
    static String partitionA;
    static String partitionB;

    @BeforeAll
    static void start() throws SQLException {
        db = TestPostgres.freshDatabase("status_analytics");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "METRICS_FLUSH_MS", "3600000", "STATS_INTERVAL_MS", "3600000"));
        // The boot-time stats run comes first, so it cannot take the partition rows the tests'
        // own refresh is expected to write; the next one is an hour away.
        await().atMost(30, TimeUnit.SECONDS).until(() -> "1".equals(scalar(
                "SELECT count(*) FROM queen.maintenance_leases WHERE task = 'stats_refresh' AND runs >= 1")));
        push(A, 3);
        push(B, 2);
        // Tenant A consumes and completes one of its three messages.
        Reply pop = call(A, "GET", "/api/v1/pop/queue/orders/partition/p1?batch=1", null);
        assertEquals(200, pop.status(), pop.body());
        JsonNode m = pop.json().get("messages").get(0);
        Reply ack = call(A, "POST", "/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + m.get("leaseId").asText() + "\",\"status\":\"completed\"}");
        assertEquals(200, ack.status(), ack.body());
        queueA = scalar("SELECT id::text FROM queen.queues WHERE tenant_id = '" + A + "' AND name = 'orders'");
        queueB = scalar("SELECT id::text FROM queen.queues WHERE tenant_id = '" + B + "' AND name = 'orders'");
        partitionA = scalar("SELECT id::text FROM queen.log_partitions WHERE queue_id = '" + queueA + "'");
        partitionB = scalar("SELECT id::text FROM queen.log_partitions WHERE queue_id = '" + queueB + "'");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    // ---------------------------------------------------------------- /status/queues/:queue

    @Test
    void queueDetailIsComputedLiveForTheCallersTenant() {
        JsonNode a = ok(call(A, "GET", "/api/v1/status/queues/orders", null));
        assertEquals("orders", a.path("queue").path("name").asText());
        assertEquals(queueA, a.path("queue").path("id").asText());
        assertTrue(a.path("queue").path("config").path("leaseTime").isIntegralNumber());
        assertTrue(a.path("queue").path("config").has("deadLetterQueue"));
        assertEquals(1, a.path("partitions").size());
        JsonNode p = a.path("partitions").get(0);
        assertEquals("p1", p.path("name").asText());
        assertEquals(3, p.path("messages").path("total").asInt());
        assertEquals(2, p.path("messages").path("pending").asInt());
        assertEquals(0, p.path("messages").path("processing").asInt());
        assertEquals(1, p.path("messages").path("completed").asInt());
        assertEquals(0, p.path("messages").path("deadLetter").asInt());
        assertTrue(p.path("messages").path("failed").isNull());
        assertEquals(p.path("messages"), p.path("stats"));
        assertEquals(0, p.path("cursor").path("batchesConsumed").asInt());
        assertFalse(p.path("oldestMessage").isNull());
        assertFalse(p.path("newestMessage").isNull());
        assertFalse(p.path("lastActivity").isNull());
        assertEquals(3, a.path("totals").path("messages").path("total").asInt());
        assertEquals(2, a.path("totals").path("messages").path("pending").asInt());

        JsonNode b = ok(call(B, "GET", "/api/v1/status/queues/orders", null));
        assertEquals(queueB, b.path("queue").path("id").asText());
        assertEquals(2, b.path("totals").path("messages").path("pending").asInt());
    }

    @Test
    void queueDetailOfAnUnknownQueueIs404ForThatTenant() {
        Reply r = call(C, "GET", "/api/v1/status/queues/orders", null);
        assertEquals(404, r.status());
        assertEquals("Queue not found", r.json().path("error").asText());
        assertEquals(404, call(A, "GET", "/api/v1/status/queues/nope", null).status());
        assertEquals(400, call("not-a-uuid", "GET", "/api/v1/status/queues/orders", null).status());
    }

    // ---------------------------------------------------------------- /status/queues, /stats/refresh

    @Test
    void queueListingReadsTheRefreshedStatsOfTheCallersTenant() {
        JsonNode refreshed = ok(call(null, "POST", "/api/v1/stats/refresh", null));
        assertEquals("segments", refreshed.path("engine").asText());
        assertTrue(refreshed.path("queuesUpdated").asInt() >= 2, refreshed.toString());
        assertTrue(refreshed.path("segPartitions").asInt() >= 2, refreshed.toString());
        assertTrue(refreshed.path("namespaces").has("namespacesUpdated"));
        assertTrue(refreshed.path("refreshedAt").isTextual());

        JsonNode a = ok(call(A, "GET", "/api/v1/status/queues", null));
        assertEquals(1, a.path("queues").size(), a.toString());
        JsonNode q = a.path("queues").get(0);
        assertEquals("orders", q.path("name").asText());
        assertEquals(queueA, q.path("id").asText());
        assertEquals(1, q.path("partitions").asInt());
        assertEquals(3, q.path("messages").path("total").asInt());
        assertEquals(2, q.path("messages").path("pending").asInt());
        for (String key : new String[] {"processing", "completed", "deadLetter"}) {
            assertTrue(q.path("messages").path(key).isIntegralNumber(), key);
        }
        assertTrue(q.path("createdAt").isTextual());
        assertEquals(100, a.path("pagination").path("limit").asInt());
        assertEquals(0, a.path("pagination").path("offset").asInt());

        JsonNode b = ok(call(B, "GET", "/api/v1/status/queues?limit=5&offset=0", null));
        assertEquals(2, b.path("queues").get(0).path("messages").path("total").asInt());
        assertEquals(0, ok(call(A, "GET", "/api/v1/status/queues?namespace=none", null)).path("queues").size());
        assertEquals(0, ok(call(A, "GET", "/api/v1/status/queues?offset=1", null)).path("queues").size());
    }

    @Test
    void queueListingRefusesBadPagingAndTimes() {
        assertEquals(400, call(A, "GET", "/api/v1/status/queues?limit=-1", null).status());
        assertEquals(400, call(A, "GET", "/api/v1/status/queues?limit=ten", null).status());
        Reply r = call(A, "GET", "/api/v1/status/queues?from=yesterday", null);
        assertEquals(400, r.status());
        assertTrue(r.json().path("error").asText().contains("from"));
    }

    // ---------------------------------------------------------------- /status/analytics

    @Test
    void messageVolumeCountsTheCallersMessagesPerBucket() {
        String window = "&from=" + at(Duration.ofMinutes(-10)) + "&to=" + at(Duration.ofMinutes(1));
        JsonNode a = ok(call(A, "GET", "/api/v1/status/analytics?interval=minute" + window, null));
        assertEquals("minute", a.path("interval").asText());
        assertEquals(3, sum(a.path("dataPoints"), "messages"));
        assertTrue(a.path("dataPoints").size() >= 11, "every minute of the window is a point");
        assertTrue(a.path("from").isTextual() && a.path("to").isTextual());
        JsonNode b = ok(call(B, "GET", "/api/v1/status/analytics?interval=minute" + window, null));
        assertEquals(2, sum(b.path("dataPoints"), "messages"));
        assertEquals(0, sum(ok(call(C, "GET", "/api/v1/status/analytics?interval=minute" + window, null))
                .path("dataPoints"), "messages"));
        // Default window: the last 24 hours, hourly.
        JsonNode d = ok(call(A, "GET", "/api/v1/status/analytics", null));
        assertEquals("hour", d.path("interval").asText());
        assertEquals(3, sum(d.path("dataPoints"), "messages"));
        assertEquals("hour", ok(call(A, "GET", "/api/v1/status/analytics?interval=fortnight", null))
                .path("interval").asText(), "an unknown interval falls back to hour");
    }

    @Test
    void messageVolumeRefusesWindowsItCannotServe() {
        assertEquals(400, call(A, "GET", "/api/v1/status/analytics?interval=minute&from="
                + at(Duration.ofDays(-30)), null).status());
        assertEquals(400, call(A, "GET", "/api/v1/status/analytics?from=" + at(Duration.ofHours(1))
                + "&to=" + at(Duration.ofHours(-1)), null).status());
    }

    // ---------------------------------------------------------------- /status

    @Test
    void statusIsCellWideAndSummarisesTheCollectorsRows() {
        sql("INSERT INTO queen.worker_metrics (hostname, worker_id, pid, bucket_time, push_message_count,"
                + " pop_message_count, ack_message_count, ack_failed_count, lag_count, avg_lag_ms, max_lag_ms)"
                + " VALUES ('status-host', 0, 1, date_trunc('minute', now()) - interval '1 minute', 7, 5, 4, 1, 5, 20, 40)"
                + " ON CONFLICT DO NOTHING");
        // A malformed tenant header is not even read on a cell-wide route.
        JsonNode s = ok(call("not-a-uuid", "GET", "/api/v1/status", null));
        assertEquals(1, s.path("bucketMinutes").asInt());
        for (String key : new String[] {"timeRange", "pointCount", "throughput", "queues", "messages", "leases",
                "deadLetterQueue", "workers", "errors", "statsAge"}) {
            assertTrue(s.has(key), key);
        }
        JsonNode point = find(s.path("throughput"), "ingested", 7);
        assertEquals(5, point.path("popMessages").asInt());
        assertEquals(4, point.path("processed").asInt());
        assertEquals(1, point.path("ackFailed").asInt());
        assertEquals(20, point.path("avgLagMs").asInt());
        assertEquals(0.12, point.path("ingestedPerSecond").asDouble(), 1e-9);
        assertEquals(0, s.path("leases").path("active").asInt());
        assertEquals(0, s.path("deadLetterQueue").path("currentMessages").asInt());
        assertTrue(s.path("messages").path("requests").has("push"));
        assertTrue(s.path("errors").has("dbErrors"));

        // Narrowed to a queue, the message counts come from the per-queue minute rows of every tenant.
        lagRow(queueA, 6, 2, 10, 20, 9, 0);
        lagRow(queueB, 6, 1, 30, 30, 4, 0);
        JsonNode scoped = ok(call(null, "GET", "/api/v1/status?queue=orders", null));
        JsonNode q = find(scoped.path("throughput"), "ingested", 13);
        assertEquals(3, q.path("popMessages").asInt());
        assertEquals(17, q.path("avgLagMs").asInt(), "pop-weighted: (2 x 10 + 1 x 30) / 3");
        assertEquals(30, q.path("maxLagMs").asInt());
    }

    @Test
    void buffersReportThisProcessSpool() {
        JsonNode b = ok(call(null, "GET", "/api/v1/status/buffers", null));
        assertEquals(0, b.path("pending").asInt());
        assertEquals(0, b.path("failed").asInt());
        assertTrue(b.path("dbHealthy").asBoolean());
        assertEquals(0, b.path("worker").asInt());
    }

    // ---------------------------------------------------------------- /analytics (tenant-scoped)

    @Test
    void queueLagAndOpsSeeOnlyTheCallersQueues() {
        lagRow(queueA, 8, 6, 50, 80, 9, 2);
        lagRow(queueB, 8, 100, 1, 1, 1, 0);
        JsonNode lag = ok(call(A, "GET", "/api/v1/analytics/queue-lag?queue=orders", null));
        assertTrue(lag.isArray());
        JsonNode p = find(lag, "popCount", 6);
        assertEquals(50, p.path("avgLagMs").asInt());
        assertEquals(80, p.path("maxLagMs").asInt());
        assertEquals(1, p.path("bucketMinutes").asInt());
        assertEquals("orders", p.path("queueName").asText());
        assertTrue(sum(lag, "popCount") < 100, "tenant B's pops are not visible to A");
        assertTrue(sum(ok(call(B, "GET", "/api/v1/analytics/queue-lag", null)), "popCount") >= 100);
        assertEquals(0, ok(call(C, "GET", "/api/v1/analytics/queue-lag", null)).size());

        JsonNode ops = ok(call(A, "GET", "/api/v1/analytics/queue-ops", null));
        assertEquals(1, ops.path("bucketMinutes").asInt());
        assertTrue(ops.path("timeRange").has("from"));
        assertEquals("[\"orders\"]", ops.path("queues").toString());
        JsonNode o = find(ops.path("series"), "popMessages", 6);
        assertEquals(9, o.path("pushMessages").asInt());
        assertEquals(0.1, o.path("popPerSecond").asDouble(), 1e-9);
        assertEquals(2.0, o.path("parkedCount").asDouble(), 1e-9);
        assertEquals(50, o.path("avgLagMs").asInt());
        for (String key : new String[] {"bucket", "pushRequests", "popEmpty", "ackRequests", "ackSuccess",
                "ackFailed", "transactions", "partitionsCreated", "partitionsDeleted", "partitionCount", "maxLagMs",
                "pushPerSecond", "ackPerSecond", "emptyPerSecond"}) {
            assertTrue(o.has(key), key);
        }
        assertEquals(400, call("nope", "GET", "/api/v1/analytics/queue-ops", null).status());
    }

    @Test
    void parkedReplicasAndRetentionAreScopedToTheCallersTenant() {
        sql("INSERT INTO queen.queue_parked_replica (bucket_time, queue_name, hostname, worker_id, parked_count, tenant_id)"
                + " VALUES (date_trunc('minute', now()) - interval '2 minutes', 'orders', 'host-a', 0, 3, '" + A + "'),"
                + " (date_trunc('minute', now()) - interval '2 minutes', 'orders', 'host-b', 0, 9, '" + B + "')");
        JsonNode parked = ok(call(A, "GET", "/api/v1/analytics/queue-parked-replicas", null));
        assertEquals("[{\"hostname\":\"host-a\",\"workerId\":0}]", parked.path("replicas").toString());
        assertEquals(3.0, parked.path("series").get(0).path("parkedCount").asDouble(), 1e-9);
        assertEquals("orders", parked.path("series").get(0).path("queueName").asText());

        sql("INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type, executed_at) VALUES"
                + " ('" + partitionA + "', 5, 'retention', now() - interval '3 minutes'),"
                + " ('" + partitionA + "', 2, 'completed_retention', now() - interval '3 minutes'),"
                + " ('" + partitionA + "', 1, '__partition_created__', now() - interval '3 minutes'),"
                + " ('" + partitionB + "', 40, 'max_wait_time_eviction', now() - interval '3 minutes'),"
                + " (gen_random_uuid(), 70, 'retention', now() - interval '3 minutes')");
        JsonNode a = ok(call(A, "GET", "/api/v1/analytics/retention", null));
        JsonNode totals = a.path("totals");
        assertEquals(5, totals.path("retentionMsgs").asInt());
        assertEquals(2, totals.path("completedRetentionMsgs").asInt());
        assertEquals(0, totals.path("evictionMsgs").asInt());
        assertEquals(7, totals.path("totalMsgs").asInt(), "markers and unattributable rows left out");
        assertEquals(2, totals.path("eventCount").asInt());
        assertEquals(1, a.path("series").size());
        assertTrue(a.path("series").get(0).path("bucket").isTextual());
        JsonNode b = ok(call(B, "GET", "/api/v1/analytics/retention?queue=orders", null));
        assertEquals(40, b.path("totals").path("evictionMsgs").asInt());
        assertEquals(0, ok(call(B, "GET", "/api/v1/analytics/retention?queue=other", null))
                .path("totals").path("totalMsgs").asInt());
    }

    // ---------------------------------------------------------------- /analytics (cell-wide)

    @Test
    void systemMetricsRebucketTheReplicaSamples() {
        sql("INSERT INTO queen.system_metrics (\"timestamp\", hostname, port, worker_id, sample_count, metrics) VALUES"
                + " (now() - interval '90 seconds', 'sys-host', 6632, 'worker-0', 60, '{\"cpu\":{\"user_us\":"
                + "{\"avg\":1500,\"min\":1000,\"max\":2000,\"last\":1200},\"system_us\":{\"avg\":100,\"min\":100,"
                + "\"max\":100,\"last\":100}},\"memory\":{\"rss_bytes\":{\"avg\":1048576,\"min\":1048576,"
                + "\"max\":1048576,\"last\":1048576}},\"database\":{\"pool_size\":8,\"pool_idle\":6,\"pool_active\":2},"
                + "\"uptime_seconds\":42}')");
        JsonNode s = ok(call("not-a-uuid", "GET", "/api/v1/analytics/system-metrics", null));
        assertEquals(1, s.path("replicaCount").asInt());
        assertEquals(1, s.path("bucketMinutes").asInt());
        JsonNode replica = s.path("replicas").get(0);
        assertEquals("sys-host", replica.path("hostname").asText());
        assertEquals("worker-0", replica.path("workerId").asText());
        JsonNode point = replica.path("timeSeries").get(0);
        assertEquals(60, point.path("sampleCount").asInt());
        JsonNode metrics = point.path("metrics");
        assertEquals(1500, metrics.path("cpu").path("user_us").path("avg").asInt());
        assertEquals(1000, metrics.path("cpu").path("user_us").path("min").asInt());
        assertEquals(1200, metrics.path("cpu").path("user_us").path("last").asInt());
        assertEquals(8, metrics.path("database").path("pool_size").path("last").asInt());
        assertEquals(42, metrics.path("uptime_seconds").path("max").asInt());
        assertTrue(metrics.path("threadpool").isNull());
        assertFalse(metrics.path("shared_state").path("enabled").asBoolean());
        assertEquals(0, ok(call(null, "GET", "/api/v1/analytics/system-metrics?hostname=elsewhere", null))
                .path("replicaCount").asInt());
    }

    @Test
    void workerMetricsAndPostgresStatsAnswerCellWide() {
        sql("INSERT INTO queen.worker_metrics (hostname, worker_id, pid, bucket_time, push_message_count,"
                + " push_request_count, db_connections) VALUES ('wm-host', 3, 9, date_trunc('minute', now())"
                + " - interval '4 minutes', 60, 6, 5) ON CONFLICT DO NOTHING");
        JsonNode w = ok(call(null, "GET", "/api/v1/analytics/worker-metrics?hostname=wm-host&workerId=3", null));
        assertEquals(1, w.path("pointCount").asInt());
        JsonNode p = w.path("timeSeries").get(0);
        assertEquals(60, p.path("pushMessages").asInt());
        assertEquals(6, p.path("pushRequests").asInt());
        assertEquals(1.0, p.path("pushPerSecond").asDouble(), 1e-9);
        assertTrue(p.path("avgJobQueueSize").isNull(), "never measured by this broker");
        assertTrue(w.path("summary").has("totalPushMessages"));
        assertTrue(w.path("workers").isArray());
        assertEquals(400, call(null, "GET", "/api/v1/analytics/worker-metrics?workerId=abc", null).status());

        JsonNode pg = ok(call(null, "GET", "/api/v1/analytics/postgres-stats", null));
        assertEquals(db.database(), pg.path("database").asText());
        for (String key : new String[] {"timestamp", "databaseCache", "tableCache", "indexCache", "cacheSummary",
                "deadTuples", "hotUpdates", "activeQueries", "autovacuumStatus", "bufferConfig", "bufferUsage",
                "tableSizes"}) {
            assertTrue(pg.has(key), key);
        }
        assertTrue(pg.path("tableSizes").size() > 0);
    }

    // ---------------------------------------------------------------- helpers

    static void push(String tenant, int n) {
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < n; i++) {
            items.append(i == 0 ? "" : ",").append("{\"queue\":\"orders\",\"partition\":\"p1\",\"payload\":{\"i\":")
                    .append(i).append("}}");
        }
        Reply r = call(tenant, "POST", "/api/v1/push", "{\"items\":[" + items + "]}");
        assertEquals(201, r.status(), r.body());
    }

    static Reply call(String tenant, String method, String path, String body) {
        return new HttpProbe(broker.port()).call(tenant, method, path, body);
    }

    static JsonNode ok(Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static String at(Duration fromNow) {
        return URLEncoder.encode(Instant.now().plus(fromNow).toString(), StandardCharsets.UTF_8);
    }

    static long sum(JsonNode array, String field) {
        long total = 0;
        for (JsonNode n : array) {
            total += n.path(field).asLong(0);
        }
        return total;
    }

    static JsonNode find(JsonNode array, String field, long value) {
        for (JsonNode n : array) {
            if (n.path(field).asLong(Long.MIN_VALUE) == value) {
                return n;
            }
        }
        throw new AssertionError("no element with " + field + "=" + value + " in " + array);
    }

    /** One per-queue minute row the collector would have written, minutes ago (merged if present). */
    static void lagRow(String queueId, int minutesAgo, long pops, long avgLag, long maxLag, long pushed, int parked) {
        sql("INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id, pop_count, avg_lag_ms, max_lag_ms,"
                + " push_message_count, parked_count, lag_count) VALUES (date_trunc('minute', now()) - interval '"
                + minutesAgo + " minutes', '" + queueId + "', " + pops + ", " + avgLag + ", " + maxLag + ", " + pushed
                + ", " + parked + ", " + pops + ") ON CONFLICT (bucket_time, queue_id) DO UPDATE SET"
                + " pop_count = EXCLUDED.pop_count, avg_lag_ms = EXCLUDED.avg_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,"
                + " push_message_count = EXCLUDED.push_message_count, parked_count = EXCLUDED.parked_count,"
                + " lag_count = EXCLUDED.lag_count");
    }

    static void sql(String statement) {
        BrokerFixture.sql(db, statement);
    }

    static String scalar(String query) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(query);
             ResultSet rs = ps.executeQuery()) {
            assertTrue(rs.next(), query);
            return rs.getString(1);
        }
    }
}
