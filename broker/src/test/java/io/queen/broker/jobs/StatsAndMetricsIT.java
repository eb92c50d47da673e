package io.queen.broker.jobs;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.queen.broker.jobs.JobsSql.column;
import static io.queen.broker.jobs.JobsSql.number;
import static io.queen.broker.jobs.JobsSql.push;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stats reconciler, the retained-bytes lane, the metrics collector and the lifecycle triggers, as scheduled. */
class StatsAndMetricsIT {

    /** The stat, or -1 while the refresh has not written its row yet (polled under await). */
    static long stat(DatabaseSettings db, String column, String type, String key) {
        return number(db, "SELECT COALESCE((SELECT " + column + " FROM queen.stats WHERE stat_type = ? AND stat_key = ?), -1)",
                type, key);
    }

    @Test
    void theScheduledJobsKeepStatsBytesAndMetricsCurrent() {
        DatabaseSettings db = TestPostgres.freshDatabase("stats_metrics");
        Map<String, String> env = Map.of("QUEEN_TEST_JOBS_FLOOR_MS", "50", "STATS_INTERVAL_MS", "200",
                "RETAINED_BYTES_INTERVAL_MS", "300", "METRICS_FLUSH_MS", "200", "QUEEN_SERVER_ID", "stats-broker",
                "RETENTION_INTERVAL", "3600000");
        try (Broker broker = BrokerFixture.start(db, env)) {
            HttpProbe http = new HttpProbe(broker.port());
            push(http, "ns1.task1.q", "p1", 3);
            push(http, "ns1.task1.q", "p2", 2);
            String queueId = column(db, "SELECT id::text FROM queen.queues WHERE name = 'ns1.task1.q'").get(0).toString();
            String p1 = JobsSql.partitionId(db, "ns1.task1.q", "p1").toString();

            // The two jobs run apart: the slow lane may have counted p1's segment before p2's push
            // landed, so its columns are awaited on their own.
            await().atMost(30, TimeUnit.SECONDS).until(() ->
                    stat(db, "pending_messages", "queue", queueId) == 5
                            && stat(db, "segment_count", "queue", queueId) == 2);
            assertTrue(stat(db, "retained_bytes", "queue", queueId) > 0);
            assertEquals(5, stat(db, "total_messages", "queue", queueId));
            assertEquals(2, stat(db, "child_count", "queue", queueId));
            assertEquals(3, stat(db, "pending_messages", "partition", p1));
            assertTrue(stat(db, "max_offset_lag", "queue", queueId) >= 3);
            await().atMost(30, TimeUnit.SECONDS).until(() -> stat(db, "total_messages", "namespace", "ns1") == 5
                    && stat(db, "total_messages", "task", "task1") == 5
                    && stat(db, "total_messages", "system", "global") == 5);

            // Consume p1: its three messages become completed.
            HttpProbe.Reply pop = http.get("/api/v1/pop/queue/ns1.task1.q/partition/p1?batch=10&autoAck=true");
            assertEquals(200, pop.status(), pop.body());
            await().atMost(30, TimeUnit.SECONDS).until(() -> stat(db, "pending_messages", "queue", queueId) == 2);
            assertEquals(3, stat(db, "completed_messages", "queue", queueId));
            assertEquals(0, stat(db, "pending_messages", "partition", p1));

            // The collector's rows: this broker's counters, and the summary the insert trigger keeps.
            await().atMost(30, TimeUnit.SECONDS).until(() ->
                    number(db, "SELECT COALESCE(sum(push_message_count), 0) FROM queen.worker_metrics"
                            + " WHERE hostname = 'stats-broker'") == 5
                    && number(db, "SELECT COALESCE(sum(pop_message_count), 0) FROM queen.worker_metrics"
                            + " WHERE hostname = 'stats-broker'") == 3
                    && number(db, "SELECT count(*) FROM queen.system_metrics WHERE hostname = 'stats-broker'") > 0);
            assertEquals(5, number(db, "SELECT total_push_messages FROM queen.worker_metrics_summary WHERE id = 1"));
            assertEquals(broker.port(), number(db, "SELECT port FROM queen.system_metrics"
                    + " WHERE hostname = 'stats-broker' LIMIT 1"));
            assertTrue(number(db, "SELECT (metrics->'database'->'pool_size'->>'max')::numeric FROM queen.system_metrics"
                    + " WHERE hostname = 'stats-broker' LIMIT 1") > 0);

            // The INSERT trigger on log_partitions counted the two partitions the pushes created.
            assertEquals(2, number(db, "SELECT COALESCE(sum(partitions_created), 0) FROM queen.queue_lag_metrics"
                    + " WHERE queue_id = ?::uuid", queueId));
        }
    }

    @Test
    void theTriggerAttachmentsSurviveASecondBootUntouched() {
        DatabaseSettings db = TestPostgres.freshDatabase("trigger_boot");
        String triggers = "SELECT tgname || ':' || oid FROM pg_trigger WHERE tgname IN"
                + " ('trg_partitions_created_counter', 'trg_partitions_deleted_counter', 'trg_worker_metrics_summary')"
                + " ORDER BY tgname";
        Map<String, String> quiet = Map.of("RETENTION_INTERVAL", "3600000");
        List<Object> first;
        try (Broker ignored = BrokerFixture.start(db, quiet)) {
            first = column(db, triggers);
        }
        assertEquals(3, first.size(), first.toString());
        try (Broker ignored = BrokerFixture.start(db, quiet)) {
            assertEquals(first, column(db, triggers));
        }
    }
}
