package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.JobSettings;
import io.queen.broker.store.MaintenanceStore;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.CapturedLog;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.queen.broker.jobs.JobsSql.column;
import static io.queen.broker.jobs.JobsSql.exec;
import static io.queen.broker.jobs.JobsSql.number;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every background cycle, run as fast as the test floor allows, while queues are created with
 * messages and deleted again, and whole tenants are purged, under it: no cycle run fails (neither
 * in the logs nor in the per-cycle failure counter of /metrics/prometheus), and the queue that
 * stays keeps getting its stats refreshed. Then the two races it found, each pinned down: a stats
 * writer, and the partition cleanup, run while a queue delete holds its queue.
 */
class VanishingQueuesIT {
    static final long CHURN_MS = 8_000;
    static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
    /** Every cycle as rarely as possible: the races below are driven by hand, after the boot-time runs. */
    static final Map<String, String> QUIET = Map.of("RETENTION_INTERVAL", "3600000", "STATS_INTERVAL_MS", "3600000",
            "RETAINED_BYTES_INTERVAL_MS", "3600000", "METRICS_FLUSH_MS", "3600000");
    static final Pattern CYCLE_SAMPLE =
            Pattern.compile("^queen_background_cycle_(runs|failures)_total\\{cycle=\"([^\"]+)\"} (\\d+)$",
                    Pattern.MULTILINE);

    static long stat(DatabaseSettings db, String column, String queueId) {
        return number(db, "SELECT COALESCE((SELECT " + column + " FROM queen.stats"
                + " WHERE stat_type = 'queue' AND stat_key = ?), -1)", queueId);
    }

    /** The messages of one push to one partition, with a tenant header (null = the default tenant). */
    static void push(HttpProbe http, String tenant, String queue, String partition, int frames) {
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < frames; i++) {
            items.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(queue).append("\",\"partition\":\"")
                    .append(partition).append("\",\"payload\":{\"n\":").append(i).append("}}");
        }
        HttpProbe.Reply r = http.call(tenant, "POST", "/api/v1/push", "{\"items\":[" + items + "]}");
        assertEquals(201, r.status(), r.body());
    }

    /** Retention due at once for the queue: its segments look an hour old, its rules a second long. */
    static void makeRetentionDue(DatabaseSettings db, String queue) {
        exec(db, "UPDATE queen.queues SET retention_enabled = true, retention_seconds = 1,"
                + " completed_retention_seconds = 1, max_wait_time_seconds = 1 WHERE name = ?", queue);
        exec(db, "UPDATE queen.log_segments s SET created_at = now() - interval '1 hour'"
                + " FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE s.partition_id = p.id AND q.name = ?", queue);
        exec(db, "UPDATE queen.log_partitions p SET oldest_live_at = now() - interval '1 hour',"
                + " oldest_txn_at = now() - interval '1 hour'"
                + " FROM queen.queues q WHERE q.id = p.queue_id AND q.name = ?", queue);
    }

    @Test
    void noCycleFailsWhileQueuesAndTenantsVanishUnderIt() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("vanishing_queues");
        Map<String, String> env = Map.of("QUEEN_TEST_JOBS_FLOOR_MS", "20", "STATS_INTERVAL_MS", "20",
                "RETAINED_BYTES_INTERVAL_MS", "20", "RETENTION_INTERVAL", "20", "METRICS_FLUSH_MS", "100",
                "QUEEN_SERVER_ID", "vanishing", "QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true");
        try (CapturedLog loops = CapturedLog.of(JobLoop.class);
             CapturedLog retention = CapturedLog.of(RetentionCycle.class);
             Broker broker = BrokerFixture.start(db, env)) {
            HttpProbe http = new HttpProbe(broker.port());
            push(http, null, "survivor", "p1", 3);
            String survivor = column(db, "SELECT id::text FROM queen.queues WHERE name = 'survivor'").get(0).toString();
            await().atMost(30, TimeUnit.SECONDS).until(() -> stat(db, "pending_messages", survivor) == 3);

            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHURN_MS);
            AtomicInteger deleted = new AtomicInteger();
            AtomicInteger purged = new AtomicInteger();
            ConcurrentLinkedQueue<String> refused = new ConcurrentLinkedQueue<>();
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<?>> churners = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int worker = w;
                churners.add(pool.submit(() -> {
                    for (int i = 0; System.nanoTime() < until; i++) {
                        String queue = "churn-" + worker + "-" + i;
                        push(http, null, queue, "a", 2);
                        push(http, null, queue, "b", 2);
                        if (i % 2 == 0) {
                            makeRetentionDue(db, queue);
                        }
                        HttpProbe.Reply r = http.delete("/api/v1/resources/queues/" + queue);
                        if (r.status() != 200) {
                            refused.add("delete " + queue + ": " + r.status() + " " + r.body());
                        }
                        deleted.incrementAndGet();
                    }
                }));
            }
            churners.add(pool.submit(() -> {
                while (System.nanoTime() < until) {
                    String tenant = UUID.randomUUID().toString();
                    push(http, tenant, "t-one", "a", 2);
                    push(http, tenant, "t-two", "a", 2);
                    for (int call = 0; call < 50; call++) {
                        HttpProbe.Reply r = http.post("/api/v1/system/tenants/" + tenant + "/purge", "");
                        if (r.status() != 200) {
                            refused.add("purge " + tenant + ": " + r.status() + " " + r.body());
                            break;
                        }
                        if (r.json().path("done").asBoolean()) {
                            purged.incrementAndGet();
                            break;
                        }
                    }
                }
            }));
            for (Future<?> f : churners) {
                f.get(CHURN_MS + 60_000, TimeUnit.MILLISECONDS);
            }
            pool.shutdown();
            assertTrue(deleted.get() > 10 && purged.get() > 2, deleted + " queues deleted, " + purged + " tenants purged");

            // The queue that stayed is still refreshed: two more messages show up in its stats.
            push(http, null, "survivor", "p2", 2);
            await().atMost(30, TimeUnit.SECONDS).until(() -> stat(db, "pending_messages", survivor) == 5);

            List<String> failures = new ArrayList<>();
            for (LogRecord r : loops.records()) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    failures.add(r.getMessage() + (r.getThrown() == null ? "" : ": " + r.getThrown()));
                }
            }
            for (LogRecord r : retention.records()) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    failures.add(r.getMessage());
                }
            }
            assertEquals(List.of(), failures, "background cycles failed while queues vanished");
            // Nor may a cycle make the deletes themselves fail (a deadlock names one victim).
            assertEquals(List.of(), List.copyOf(refused), "deletes and purges refused while the cycles ran");

            // The same, as a user sees it: every cycle ran, none failed.
            String exposition = http.get("/metrics/prometheus").body();
            Map<String, long[]> cycles = new java.util.TreeMap<>();
            Matcher m = CYCLE_SAMPLE.matcher(exposition);
            while (m.find()) {
                cycles.computeIfAbsent(m.group(2), k -> new long[2])[m.group(1).equals("runs") ? 0 : 1] =
                        Long.parseLong(m.group(3));
            }
            assertEquals(List.of("metrics", "retained-bytes", "retention", "stats-refresh"),
                    List.copyOf(cycles.keySet()), exposition);
            cycles.forEach((cycle, counts) -> {
                assertTrue(counts[0] > 0, cycle + " never ran");
                assertEquals(0, counts[1], cycle + " failed " + counts[1] + " of " + counts[0] + " runs");
            });
        }
    }

    @Test
    void theStatsWritersNeitherWaitForNorFailOnAQueueWhoseDeleteIsInFlight() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("vanishing_stats");
        try (Broker broker = BrokerFixture.start(db, QUIET)) {
            awaitBootRuns(db, "stats_refresh", "retained_bytes");
            HttpProbe http = new HttpProbe(broker.port());
            push(http, null, "doomed", "a", 2);
            push(http, null, "kept", "a", 3);
            String kept = column(db, "SELECT id::text FROM queen.queues WHERE name = 'kept'").get(0).toString();
            withConnection(broker, MaintenanceStore::statsRefresh); // doomed gets its stat rows

            try (Connection deleter = TestPostgres.connect(db)) {
                deleter.setAutoCommit(false);
                deleteQueue(deleter, "doomed"); // holds the queue and the stat rows its cascade deleted
                JsonNode refreshed = promptly("stats refresh", () -> withConnection(broker, MaintenanceStore::statsRefresh));
                assertEquals("[\"doomed\"]", refreshed.path("skipped").toString(), refreshed.toString());
                promptly("retained bytes", () -> withConnection(broker, MaintenanceStore::refreshRetainedBytes));
                deleter.commit();
            }
            assertEquals(3, stat(db, "pending_messages", kept));
            assertTrue(stat(db, "retained_bytes", kept) > 0);
            JsonNode after = withConnection(broker, MaintenanceStore::statsRefresh);
            assertEquals("[]", after.path("skipped").toString());
            assertEquals(0, number(db, "SELECT count(*) FROM queen.stats s WHERE s.queue_id IS NOT NULL"
                    + " AND NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.id = s.queue_id)"));
        }
    }

    @Test
    void partitionCleanupStepsOverAPartitionWhoseQueueADeleteHolds() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("vanishing_cleanup");
        try (Broker broker = BrokerFixture.start(db, QUIET)) {
            awaitBootRuns(db, "retention");
            HttpProbe http = new HttpProbe(broker.port());
            push(http, null, "doomed", "idle", 1);
            push(http, null, "kept", "idle", 1);
            exec(db, "DELETE FROM queen.log_segments");
            exec(db, "UPDATE queen.log_partitions SET created_at = now() - interval '40 days',"
                    + " last_write_at = now() - interval '40 days', oldest_live_at = NULL");
            // No lag-metrics row this minute: the delete trigger inserts one, and its foreign key
            // then needs the queue lock (an update of an existing row would not check it).
            exec(db, "DELETE FROM queen.queue_lag_metrics");
            RetentionCycle cycle = new RetentionCycle(broker.database(), JobSettings.from(new Env(Map.of())));

            try (Connection deleter = TestPostgres.connect(db)) {
                deleter.setAutoCommit(false);
                // A queue delete's first step; its next one waits for the partitions.
                try (PreparedStatement ps = deleter.prepareStatement(
                        "SELECT id FROM queen.queues WHERE name = 'doomed' FOR UPDATE")) {
                    ps.executeQuery().close();
                }
                long cleaned = promptly("partition cleanup", () -> withConnection(broker, cycle::cleanupPartitions));
                assertEquals(1, cleaned, "only kept's idle partition is reclaimed");
                deleteQueue(deleter, "doomed");
                deleter.commit();
            }
            assertEquals(0, number(db, "SELECT count(*) FROM queen.log_partitions"));
            assertEquals(List.of("kept"), column(db, "SELECT name FROM queen.queues"));
        }
    }

    @FunctionalInterface
    interface OnConnection<T> {
        T apply(Connection c) throws SQLException;
    }

    static <T> T withConnection(Broker broker, OnConnection<T> body) throws SQLException {
        try (Connection c = broker.database().connection()) {
            c.setAutoCommit(true);
            return body.apply(c);
        }
    }

    static void deleteQueue(Connection c, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.delete_queue_v1(?, ?::uuid)")) {
            ps.setString(1, queue);
            ps.setString(2, DEFAULT_TENANT);
            ps.executeQuery().close();
        }
    }

    /** The call's answer, which must come while the caller's transaction still holds its locks. */
    static <T> T promptly(String what, Callable<T> call) throws Exception {
        CompletableFuture<T> f = CompletableFuture.supplyAsync(() -> {
            try {
                return call.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail(what + " waited for the queue delete in flight");
            return null;
        }
    }

    static void awaitBootRuns(DatabaseSettings db, String... tasks) {
        for (String task : tasks) {
            await().atMost(30, TimeUnit.SECONDS).until(() ->
                    number(db, "SELECT COALESCE((SELECT runs FROM queen.maintenance_leases WHERE task = ?), 0)", task) >= 1);
        }
    }
}
