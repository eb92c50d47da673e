package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.DatabaseHealth;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.ObservabilityService;
import io.queen.broker.engine.ProcessGauges;
import io.queen.broker.engine.PushSpool;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryUsage;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.OptionalLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code GET /metrics} (JSON) and {@code GET /metrics/prometheus} (Prometheus text
 * exposition 0.0.4), both public and cell-wide. The exposition is in-process families first
 * (process counters, pool, maintenance and spool, JVM), then the database-backed families of one call to
 * queen.get_prometheus_metrics_v1; when that call fails those families are absent and the
 * scrape still answers 200, so a database outage never blinds the process metrics.
 * The process families include {@code queen_background_cycle_runs_total} and
 * {@code queen_background_cycle_failures_total}, labelled {@code cycle} (retention, stats-refresh,
 * retained-bytes, metrics): runs of each background cycle on this process and those that failed;
 * a growing failure count is a cycle that keeps failing (its WARNING log says why). After them come
 * the KV, timer, sweeper and streams families ({@link SurfaceFamilies}).
 */
public final class MetricsHttpService implements HttpService {
    private static final Logger LOG = Logger.getLogger(MetricsHttpService.class.getName());

    private final BrokerMetrics metrics;
    private final DatabaseHealth health;
    private final ObservabilityService observability;
    private final ProcessGauges process;
    private final MaintenanceSwitches switches;
    private final PushSpool spool;

    public MetricsHttpService(BrokerMetrics metrics, DatabaseHealth health, ObservabilityService observability,
                              ProcessGauges process, MaintenanceSwitches switches, PushSpool spool) {
        this.metrics = metrics;
        this.health = health;
        this.observability = observability;
        this.process = process;
        this.switches = switches;
        this.spool = spool;
    }

    /** Registers the two routes and the filter that counts every request the router sees. */
    public static void install(HttpRouting.Builder routing, BrokerMetrics metrics, DatabaseHealth health,
                               ObservabilityService observability, MaintenanceSwitches switches, PushSpool spool) {
        routing.addFilter((chain, req, res) -> {
            metrics.requestServed();
            chain.proceed();
        });
        routing.register(new MetricsHttpService(metrics, health, observability, new ProcessGauges(), switches,
                spool));
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/metrics", this::json)
             .get("/metrics/prometheus", this::prometheus);
    }

    // ---------------------------------------------------------------- JSON

    private void json(ServerRequest req, ServerResponse res) {
        BrokerMetrics.Counters c = metrics.snapshot();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        MemoryUsage heap = memory.getHeapMemoryUsage();
        ObjectNode body = Json.object().put("uptime", metrics.uptimeSeconds());
        body.putObject("requests").put("total", c.httpRequests()).put("rate", metrics.requestsPerSecond());
        body.putObject("messages").put("total", c.messages()).put("rate", metrics.messagesPerSecond());
        DatabaseHealth.Pool pool = health.pool();
        body.putObject("database")
                .put("poolSize", pool.size())
                .put("idleConnections", pool.idle())
                .put("waitingRequests", pool.waiting());
        ObjectNode mem = body.putObject("memory");
        OptionalLong rss = process.residentBytes();
        if (rss.isPresent()) {
            mem.put("rss", rss.getAsLong());
        } else {
            mem.putNull("rss");
        }
        mem.put("heapTotal", heap.getCommitted())
           .put("heapUsed", heap.getUsed())
           .put("external", memory.getNonHeapMemoryUsage().getUsed())
           .put("arrayBuffers", bufferPoolBytes());
        ObjectNode cpu = body.putObject("cpu");
        process.cpuTimes().ifPresentOrElse(
                t -> cpu.put("user", t.userMicros()).put("system", t.systemMicros()),
                () -> cpu.putNull("user").putNull("system"));
        Json.send(res, Status.OK_200, body);
    }

    /** Direct and mapped NIO buffers: the JVM's counterpart of memory held outside the heap for I/O. */
    private static long bufferPoolBytes() {
        long total = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            total += Math.max(pool.getMemoryUsed(), 0);
        }
        return total;
    }

    // ---------------------------------------------------------------- Prometheus

    private void prometheus(ServerRequest req, ServerResponse res) {
        PrometheusText text = new PrometheusText();
        processFamilies(text);
        SurfaceFamilies.write(text, metrics.surfaces());
        poolFamilies(text);
        maintenanceFamilies(text);
        jvmFamilies(text);
        databaseFamilies(text);
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, PrometheusText.CONTENT_TYPE);
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        res.send(text.text().getBytes(StandardCharsets.UTF_8));
    }

    private void processFamilies(PrometheusText t) {
        BrokerMetrics.Counters c = metrics.snapshot();
        t.family("queen_uptime_seconds", "gauge", "Process uptime in seconds").sample(metrics.uptimeSeconds());
        OptionalLong rss = process.residentBytes();
        if (rss.isPresent()) {
            t.family("queen_process_resident_memory_bytes", "gauge", "Resident memory of this process")
                    .sample(rss.getAsLong());
        }
        counter(t, "queen_process_push_requests_total", "Push API requests handled by this process", c.pushRequests());
        counter(t, "queen_process_pop_requests_total", "Pop API requests handled by this process", c.popRequests());
        counter(t, "queen_process_ack_requests_total", "Ack API requests handled by this process", c.ackRequests());
        counter(t, "queen_process_push_messages_total", "Messages pushed by this process", c.pushMessages());
        counter(t, "queen_process_pop_messages_total", "Messages popped by this process", c.popMessages());
        counter(t, "queen_process_ack_messages_total", "Messages acked by this process", c.ackMessages());
        counter(t, "queen_process_http_requests_total", "HTTP requests routed by this process", c.httpRequests());
        var cycles = metrics.cycles();
        t.family("queen_background_cycle_runs_total", "counter", "Background cycle runs on this process, by cycle");
        cycles.forEach((cycle, n) -> t.sample(n.runs(), "cycle", cycle));
        t.family("queen_background_cycle_failures_total", "counter",
                "Background cycle runs on this process that failed, by cycle");
        cycles.forEach((cycle, n) -> t.sample(n.failures(), "cycle", cycle));
    }

    private void poolFamilies(PrometheusText t) {
        DatabaseHealth.Pool pool = health.pool();
        t.family("queen_db_pool_size", "gauge", "Configured DB pool size").sample(pool.size());
        t.family("queen_db_pool_idle", "gauge", "Idle pooled connections").sample(pool.idle());
        t.family("queen_db_pool_active", "gauge", "Active pooled connections").sample(pool.active());
        t.family("queen_db_pool_waiting", "gauge", "Requests waiting for a pooled connection")
                .sample(pool.waiting());
    }

    private void maintenanceFamilies(PrometheusText t) {
        t.family("queen_maintenance_mode_enabled", "gauge", "Push maintenance mode flag")
                .sample(switches.pushPaused() ? 1 : 0);
        t.family("queen_file_buffer_pending", "gauge", "Spooled push events awaiting drain")
                .sample(spool.pendingCount());
        t.family("queen_file_buffer_failed", "gauge", "Spool write failures").sample(spool.failedCount());
        t.family("queen_file_buffer_db_healthy", "gauge", "File-buffer DB-reachability hint")
                .sample(spool.databaseHealthy() ? 1 : 0);
    }

    private static void jvmFamilies(PrometheusText t) {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        MemoryUsage heap = memory.getHeapMemoryUsage();
        MemoryUsage nonHeap = memory.getNonHeapMemoryUsage();
        t.family("jvm_memory_used_bytes", "gauge", "Used bytes of a JVM memory area")
                .sample(heap.getUsed(), "area", "heap").sample(nonHeap.getUsed(), "area", "nonheap");
        t.family("jvm_memory_committed_bytes", "gauge", "Committed bytes of a JVM memory area")
                .sample(heap.getCommitted(), "area", "heap").sample(nonHeap.getCommitted(), "area", "nonheap");
        t.family("jvm_memory_max_bytes", "gauge", "Maximum bytes of a JVM memory area (absent when unbounded)");
        if (heap.getMax() >= 0) {
            t.sample(heap.getMax(), "area", "heap");
        }
        if (nonHeap.getMax() >= 0) {
            t.sample(nonHeap.getMax(), "area", "nonheap");
        }
        t.family("jvm_memory_pool_used_bytes", "gauge", "Used bytes of a JVM memory pool");
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            t.sample(pool.getUsage().getUsed(), "pool", pool.getName());
        }
        t.family("jvm_buffer_pool_used_bytes", "gauge", "Used bytes of a JVM buffer pool");
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            t.sample(Math.max(pool.getMemoryUsed(), 0), "pool", pool.getName());
        }
        t.family("jvm_gc_collections_total", "counter", "Collections run by a garbage collector");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            t.sample(Math.max(gc.getCollectionCount(), 0), "gc", gc.getName());
        }
        t.family("jvm_gc_collection_seconds_total", "counter", "Time spent in a garbage collector");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            t.sample(Math.max(gc.getCollectionTime(), 0) / 1000.0, "gc", gc.getName());
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        t.family("jvm_threads_current", "gauge", "Live platform threads").sample(threads.getThreadCount());
        t.family("jvm_threads_daemon", "gauge", "Live daemon threads").sample(threads.getDaemonThreadCount());
        t.family("jvm_threads_peak", "gauge", "Peak live platform threads").sample(threads.getPeakThreadCount());
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                && os.getProcessCpuTime() >= 0) {
            t.family("process_cpu_seconds_total", "counter", "CPU time consumed by this process")
                    .sample(os.getProcessCpuTime() / 1e9);
        }
    }

    private void databaseFamilies(PrometheusText t) {
        JsonNode db;
        try {
            String json = observability.prometheusFamilies();
            if (json == null) {
                return;
            }
            db = Json.MAPPER.readTree(json);
        } catch (SQLException | IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "GET /metrics/prometheus: database-backed families skipped: " + e.getMessage());
            return;
        }
        clusterTotals(t, db.path("system_totals"));
        perQueue(t, db.path("per_queue"));
        deadLetters(t, db.path("dlq"));
    }

    /** Lifetime totals of worker_metrics_summary: the same on every replica, aggregate with max. */
    private static void clusterTotals(PrometheusText t, JsonNode totals) {
        if (!totals.isObject()) {
            return;
        }
        String[][] map = {
                {"pushRequests", "queen_cluster_push_requests_total"},
                {"popRequests", "queen_cluster_pop_requests_total"},
                {"ackRequests", "queen_cluster_ack_requests_total"},
                {"transactions", "queen_cluster_transactions_total"},
                {"pushMessages", "queen_cluster_push_messages_total"},
                {"popMessages", "queen_cluster_pop_messages_total"},
                {"ackMessages", "queen_cluster_ack_messages_total"},
                {"dbErrors", "queen_cluster_db_errors_total"},
                {"dlqCount", "queen_cluster_dlq_total"},
        };
        for (String[] m : map) {
            JsonNode v = totals.path(m[0]);
            if (v.isNumber()) {
                t.family(m[1], "counter", "DB-backed cluster lifetime total").sample(v.asLong(), "scope", "cluster");
            }
        }
        t.family("queen_cluster_ack_total", "counter", "Acks by outcome (DB-backed)");
        if (totals.path("ackSuccess").isNumber()) {
            t.sample(totals.path("ackSuccess").asLong(), "scope", "cluster", "result", "success");
        }
        if (totals.path("ackFailed").isNumber()) {
            t.sample(totals.path("ackFailed").asLong(), "scope", "cluster", "result", "failed");
        }
    }

    /** The newest minute bucket (within 5 minutes) of each queue name; one family at a time. */
    private static void perQueue(PrometheusText t, JsonNode queues) {
        if (!queues.isArray()) {
            return;
        }
        String[][] rates = {
                {"queen_queue_pop_messages_per_minute", "pop_count"},
                {"queen_queue_push_requests_per_minute", "push_request_count"},
                {"queen_queue_push_messages_per_minute", "push_message_count"},
                {"queen_queue_pop_empty_per_minute", "pop_empty_count"},
                {"queen_queue_transactions_per_minute", "transaction_count"},
                {"queen_queue_conflated_per_minute", "conflated_count"},
                {"queen_queue_parked_consumers", "parked_count"},
                {"queen_queue_metrics_age_seconds", "bucket_age_seconds"},
        };
        for (String[] r : rates) {
            t.family(r[0], "gauge", "Per-queue minute-rate");
            for (JsonNode q : queues) {
                t.sample(q.path(r[1]).asDouble(0), "queue", q.path("queue").asText(""));
            }
        }
        t.family("queen_queue_pop_lag_milliseconds", "gauge", "Per-queue pop lag");
        for (JsonNode q : queues) {
            String name = q.path("queue").asText("");
            t.sample(q.path("avg_lag_ms").asDouble(0), "queue", name, "stat", "avg");
            t.sample(q.path("max_lag_ms").asDouble(0), "queue", name, "stat", "max");
        }
        t.family("queen_queue_ack_per_minute", "gauge", "Per-queue acks by result");
        for (JsonNode q : queues) {
            String name = q.path("queue").asText("");
            t.sample(q.path("ack_success_count").asDouble(0), "queue", name, "result", "success");
            t.sample(q.path("ack_failed_count").asDouble(0), "queue", name, "result", "failed");
        }
    }

    private static void deadLetters(PrometheusText t, JsonNode dlq) {
        if (!dlq.isObject()) {
            return;
        }
        t.family("queen_dlq_depth", "gauge", "Dead-letter queue depth");
        if (dlq.path("total").isNumber()) {
            t.sample(dlq.path("total").asLong(), "scope", "cluster");
        }
        t.family("queen_dlq_depth_by_queue", "gauge", "Dead-letter depth per queue");
        for (JsonNode q : dlq.path("per_queue")) {
            t.sample(q.path("count").asLong(0), "queue", q.path("queue").asText(""));
        }
    }

    private static void counter(PrometheusText t, String name, String help, long value) {
        t.family(name, "counter", help).sample(value);
    }
}
