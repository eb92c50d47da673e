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

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** GET /metrics and GET /metrics/prometheus on a real broker after known pushes, pops and acks. */
class MetricsIT {
    static final String OTHER_TENANT = "cccccccc-0000-4000-8000-00000000000c";
    /** A queue name a label must escape: a quote and a backslash. */
    static final String NASTY = "per\"queue\\x";

    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;
    static final HttpClient CLIENT = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("metrics");
        // Background flushes and refreshes stay out of the way of the rows this test writes.
        broker = BrokerFixture.start(db, Map.of("METRICS_FLUSH_MS", "3600000", "STATS_INTERVAL_MS", "3600000"));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    record Scrape(int status, String contentType, String cacheControl, String body) {
        StrictPrometheusParser.Exposition parsed() {
            return StrictPrometheusParser.parse(body);
        }
    }

    static Scrape scrape() {
        try {
            HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + broker.port() + "/metrics/prometheus")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Scrape(r.statusCode(), r.headers().firstValue("content-type").orElse(null),
                    r.headers().firstValue("cache-control").orElse(null), r.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static double value(StrictPrometheusParser.Exposition e, String name, String... labels) {
        Double v = e.value(name, labels);
        assertNotNull(v, name + " " + String.join(",", labels) + " missing");
        return v;
    }

    @Test
    void theExpositionParsesStrictlyAndCountsPushedPoppedAndAckedMessages() {
        StrictPrometheusParser.Exposition before = scrape().parsed();

        http.post("/api/v1/push", "{\"items\":[" + item("m_orders", 1) + "," + item("m_orders", 2) + ","
                + item("m_orders", 3) + "]}");
        http.post("/api/v1/push", "{\"items\":[" + item("m_orders", 4) + "," + item("m_orders", 5) + "]}");
        Reply pop = http.get("/api/v1/pop/queue/m_orders?batch=10");
        assertEquals(200, pop.status(), pop.body());
        JsonNode messages = pop.json().get("messages");
        assertEquals(5, messages.size());
        assertEquals(204, http.get("/api/v1/pop/queue/m_orders?batch=10").status());
        StringBuilder acks = new StringBuilder();
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            acks.append(i == 0 ? "" : ",").append("{\"transactionId\":\"").append(m.get("transactionId").asText())
                    .append("\",\"partitionId\":\"").append(m.get("partitionId").asText())
                    .append("\",\"leaseId\":\"").append(m.get("leaseId").asText())
                    .append("\",\"status\":\"").append(i == 4 ? "dlq" : "completed").append("\"}");
        }
        Reply ack = http.post("/api/v1/ack/batch", "{\"acknowledgments\":[" + acks + "]}");
        assertEquals(200, ack.status(), ack.body());

        Scrape s = scrape();
        assertEquals(200, s.status());
        StrictPrometheusParser.Exposition after = s.parsed();
        assertEquals(2, delta(before, after, "queen_process_push_requests_total"));
        assertEquals(5, delta(before, after, "queen_process_push_messages_total"));
        assertEquals(2, delta(before, after, "queen_process_pop_requests_total"));
        assertEquals(5, delta(before, after, "queen_process_pop_messages_total"));
        assertEquals(1, delta(before, after, "queen_process_ack_requests_total"));
        assertEquals(5, delta(before, after, "queen_process_ack_messages_total"));
        assertEquals("counter", after.types().get("queen_process_push_messages_total"));

        assertEquals(1, value(after, "queen_dlq_depth", "scope", "cluster"));
        assertEquals(1, value(after, "queen_dlq_depth_by_queue", "queue", "m_orders"));
    }

    @Test
    void theExpositionCarriesProcessPoolMaintenanceAndJvmFamilies() {
        Scrape s = scrape();
        assertEquals("text/plain; version=0.0.4; charset=utf-8", s.contentType());
        assertEquals("no-cache", s.cacheControl());
        StrictPrometheusParser.Exposition e = s.parsed();
        assertTrue(value(e, "queen_uptime_seconds") >= 0);
        assertTrue(value(e, "queen_process_resident_memory_bytes") > 0);
        int poolSize = broker.database().settings().poolSize();
        assertEquals(poolSize, value(e, "queen_db_pool_size"));
        assertTrue(value(e, "queen_db_pool_idle") + value(e, "queen_db_pool_active") <= poolSize);
        assertEquals(0, value(e, "queen_maintenance_mode_enabled"));
        assertEquals(0, value(e, "queen_file_buffer_pending"));
        assertEquals(1, value(e, "queen_file_buffer_db_healthy"));
        assertTrue(value(e, "jvm_memory_used_bytes", "area", "heap") > 0);
        assertTrue(value(e, "jvm_threads_current") > 0);
        assertTrue(!e.samples("jvm_gc_collections_total").isEmpty());
        assertEquals("counter", e.types().get("jvm_gc_collection_seconds_total"));
        // The reference broker removed these families in 1.1.0; they are never to be emitted again.
        assertTrue(!e.hasFamily("queen_queue_depth_total") && !e.hasFamily("queen_queue_depth_pending"));
    }

    @Test
    void perQueueFamiliesFoldTheNewestBucketOfSameNamedQueuesAndEscapeTheLabel() {
        String mine = queue(NASTY, "00000000-0000-0000-0000-000000000001");
        String theirs = queue(NASTY, OTHER_TENANT);
        String stale = queue("m_stale", "00000000-0000-0000-0000-000000000001");
        // Newest bucket of each queue within five minutes; the older one is ignored.
        lagRow(mine, "4 minutes", 99, 9999, 9999, 1, 0, 0);
        lagRow(mine, "2 minutes", 10, 100, 300, 9, 1, 2);
        lagRow(theirs, "3 minutes", 30, 200, 500, 20, 0, 1);
        lagRow(stale, "10 minutes", 7, 1, 1, 0, 0, 0);
        BrokerFixture.sql(db, "UPDATE queen.worker_metrics_summary SET total_push_requests = 11, total_push_messages = 111,"
                + " total_ack_success = 7, total_ack_failed = 2, total_dlq = 3 WHERE id = 1");

        Scrape s = scrape();
        StrictPrometheusParser.Exposition e = s.parsed();
        assertEquals(40, value(e, "queen_queue_pop_messages_per_minute", "queue", NASTY));
        assertEquals(175, value(e, "queen_queue_pop_lag_milliseconds", "queue", NASTY, "stat", "avg"));
        assertEquals(500, value(e, "queen_queue_pop_lag_milliseconds", "queue", NASTY, "stat", "max"));
        assertEquals(29, value(e, "queen_queue_ack_per_minute", "queue", NASTY, "result", "success"));
        assertEquals(1, value(e, "queen_queue_ack_per_minute", "queue", NASTY, "result", "failed"));
        assertEquals(3, value(e, "queen_queue_parked_consumers", "queue", NASTY));
        double age = value(e, "queen_queue_metrics_age_seconds", "queue", NASTY);
        assertTrue(age >= 120 && age < 240, "age of the youngest newest bucket: " + age);
        assertNull(e.value("queen_queue_pop_messages_per_minute", "queue", "m_stale"), "older than five minutes");
        assertTrue(s.body().contains("queue=\"per\\\"queue\\\\x\""), "escaped label in the text");

        assertEquals(11, value(e, "queen_cluster_push_requests_total", "scope", "cluster"));
        assertEquals(111, value(e, "queen_cluster_push_messages_total", "scope", "cluster"));
        assertEquals(7, value(e, "queen_cluster_ack_total", "scope", "cluster", "result", "success"));
        assertEquals(2, value(e, "queen_cluster_ack_total", "scope", "cluster", "result", "failed"));
        assertEquals(3, value(e, "queen_cluster_dlq_total", "scope", "cluster"));
    }

    @Test
    void metricsJsonHasTheReferenceShapeAndCountsEveryRequest() {
        JsonNode first = http.get("/metrics").json();
        http.get("/health");
        http.get("/api/v1/no-such-route");
        JsonNode second = http.get("/metrics").json();
        assertEquals(first.path("requests").path("total").asLong() + 3, second.path("requests").path("total").asLong(),
                "the filter counts every routed request, 404s included");
        assertTrue(second.path("requests").path("rate").isNumber());
        assertTrue(second.path("messages").path("total").isIntegralNumber());
        assertTrue(second.path("messages").path("rate").isNumber());
        assertTrue(second.path("uptime").isIntegralNumber());
        JsonNode database = second.path("database");
        assertEquals(broker.database().settings().poolSize(), database.path("poolSize").asInt());
        assertTrue(database.path("idleConnections").isIntegralNumber());
        assertTrue(database.path("waitingRequests").isIntegralNumber());
        JsonNode memory = second.path("memory");
        assertTrue(memory.path("rss").asLong() > 0);
        assertTrue(memory.path("heapUsed").asLong() > 0);
        assertTrue(memory.path("heapTotal").asLong() >= memory.path("heapUsed").asLong());
        assertTrue(memory.path("external").asLong() > 0);
        assertTrue(memory.path("arrayBuffers").isIntegralNumber());
        assertTrue(second.path("cpu").path("user").asLong() > 0);
        assertTrue(second.path("cpu").path("system").isIntegralNumber());
    }

    @Test
    void metricsJsonMessageTotalFollowsTheDataPath() {
        long before = http.get("/metrics").json().path("messages").path("total").asLong();
        http.post("/api/v1/push", "{\"items\":[" + item("m_json", 1) + "," + item("m_json", 2) + "]}");
        Reply pop = http.get("/api/v1/pop/queue/m_json?batch=10&autoAck=true");
        assertEquals(200, pop.status(), pop.body());
        long after = http.get("/metrics").json().path("messages").path("total").asLong();
        assertEquals(before + 4, after, "2 pushed + 2 popped");
    }

    private static long delta(StrictPrometheusParser.Exposition before, StrictPrometheusParser.Exposition after,
                              String name) {
        return Math.round(value(after, name) - value(before, name));
    }

    private static String item(String queue, int n) {
        return "{\"queue\":\"" + queue + "\",\"payload\":{\"n\":" + n + "}}";
    }

    /** A queue row created directly, so no traffic of this broker ever touches its metrics rows. */
    private static String queue(String name, String tenant) {
        String id = java.util.UUID.randomUUID().toString();
        BrokerFixture.sql(db, "INSERT INTO queen.queues (id, name, tenant_id) VALUES ('" + id + "', '"
                + name.replace("'", "''") + "', '" + tenant + "')");
        return id;
    }

    private static void lagRow(String queueId, String age, long pops, long avgLag, long maxLag, long ackOk,
                               long ackFailed, int parked) {
        BrokerFixture.sql(db, "INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id, pop_count, avg_lag_ms,"
                + " max_lag_ms, ack_success_count, ack_failed_count, parked_count, push_message_count, lag_count)"
                + " VALUES (date_trunc('minute', now()) - interval '" + age + "', '" + queueId + "', " + pops + ", "
                + avgLag + ", " + maxLag + ", " + ackOk + ", " + ackFailed + ", " + parked + ", " + pops * 2 + ", "
                + pops + ")");
    }
}
