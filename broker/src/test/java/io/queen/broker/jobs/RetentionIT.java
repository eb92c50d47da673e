package io.queen.broker.jobs;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.JobSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.queen.broker.jobs.JobsSql.age;
import static io.queen.broker.jobs.JobsSql.column;
import static io.queen.broker.jobs.JobsSql.exec;
import static io.queen.broker.jobs.JobsSql.number;
import static io.queen.broker.jobs.JobsSql.partitionId;
import static io.queen.broker.jobs.JobsSql.push;
import static io.queen.broker.jobs.JobsSql.segmentBases;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The retention cycle's phases against a real broker's database. The broker's own retention job
 * runs once at boot and then not for an hour, so each test drives the cycle itself, with a batch
 * of 2 rows so the step loops are exercised.
 */
class RetentionIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;
    static RetentionCycle cycle;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("retention");
        Map<String, String> env = Map.of("RETENTION_INTERVAL", "3600000", "STATS_INTERVAL_MS", "3600000",
                "RETAINED_BYTES_INTERVAL_MS", "3600000", "METRICS_FLUSH_MS", "3600000");
        broker = BrokerFixture.start(db, env);
        http = new HttpProbe(broker.port());
        JobSettings settings = JobSettings.from(new Env(Map.of("RETENTION_BATCH_SIZE", "2")));
        cycle = new RetentionCycle(broker.database(), settings);
        // Let the boot-time run pass, so it cannot race the tests' own runs.
        await().atMost(30, TimeUnit.SECONDS).until(() ->
                number(db, "SELECT runs FROM queen.maintenance_leases WHERE task = 'retention'") >= 1);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static RetentionCycle.Tally retain() throws SQLException {
        RetentionCycle.Tally tally = new RetentionCycle.Tally();
        try (Connection c = broker.database().connection()) {
            cycle.retain(c, tally);
        }
        return tally;
    }

    static long historyFrames(UUID partition, String type) {
        return number(db, "SELECT COALESCE(sum(messages_deleted), 0) FROM queen.retention_history"
                + " WHERE partition_id = ? AND retention_type = ?", partition, type);
    }

    @Test
    void retentionDeletesExactlyTheSegmentsOlderThanTheRetentionAndAdvancesTheWatermarks() throws SQLException {
        for (int i = 0; i < 5; i++) {
            push(http, "ret-all", "p", 1);
            push(http, "ret-off", "p", 1);
        }
        exec(db, "UPDATE queen.queues SET retention_enabled = true, retention_seconds = 3600 WHERE name = 'ret-all'");
        // ret-off has the same old data but retention is not enabled on it.
        exec(db, "UPDATE queen.queues SET retention_enabled = false, retention_seconds = 3600 WHERE name = 'ret-off'");
        UUID p = partitionId(db, "ret-all", "p");
        UUID off = partitionId(db, "ret-off", "p");
        age(db, p, "log_segments", 7300, 7200, 7100, 60, 30);
        age(db, off, "log_segments", 7300, 7200, 7100, 60, 30);

        RetentionCycle.Tally tally = retain();

        assertEquals(List.of(3L, 4L), segmentBases(db, p));
        assertEquals(3, number(db, "SELECT log_start FROM queen.log_partitions WHERE id = ?", p));
        assertEquals(1L, number(db, "SELECT count(*) FROM queen.log_partitions p JOIN queen.log_segments s"
                + " ON s.partition_id = p.id AND s.base_offset = 3 AND s.created_at = p.oldest_live_at WHERE p.id = ?", p));
        assertEquals(3, historyFrames(p, "retention"));
        assertEquals(3, tally.segments);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), segmentBases(db, off));

        // Nothing more is due: a second run deletes nothing.
        retain();
        assertEquals(List.of(3L, 4L), segmentBases(db, p));
        assertEquals(3, historyFrames(p, "retention"));
    }

    @Test
    void completedRetentionKeepsEverySegmentSomeGroupStillNeeds() throws SQLException {
        for (int i = 0; i < 4; i++) {
            push(http, "ret-done", "p", 2); // segments [0,1] [2,3] [4,5] [6,7]
        }
        exec(db, "UPDATE queen.queues SET retention_enabled = true, completed_retention_seconds = 60"
                + " WHERE name = 'ret-done'");
        UUID p = partitionId(db, "ret-done", "p");
        age(db, p, "log_segments", 7400, 7300, 7200, 7100);
        exec(db, "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES (?, 'fast', 7),"
                + " (?, 'slow', 2)", p, p);

        retain();
        // 'slow' is midway through [2,3]: only [0,1] is consumed by every group.
        assertEquals(List.of(2L, 4L, 6L), segmentBases(db, p));
        assertEquals(2, number(db, "SELECT log_start FROM queen.log_partitions WHERE id = ?", p));
        assertEquals(2, historyFrames(p, "completed_retention"));

        // 'slow' catches up, but a group registered for the queue with no cursor here yet would be
        // seeded from the start of the log: nothing may go.
        exec(db, "UPDATE queen.log_consumers SET committed = 7 WHERE partition_id = ? AND consumer_group = 'slow'", p);
        exec(db, "INSERT INTO queen.consumer_groups_metadata (consumer_group, queue_id, subscription_mode,"
                + " subscription_timestamp) SELECT 'late', id, 'all', 'epoch' FROM queen.queues WHERE name = 'ret-done'");
        retain();
        assertEquals(List.of(2L, 4L, 6L), segmentBases(db, p));

        // Subscribed after these segments were written: it will never be served them.
        exec(db, "UPDATE queen.consumer_groups_metadata SET subscription_timestamp = now() WHERE consumer_group = 'late'");
        retain();
        assertEquals(List.of(), segmentBases(db, p));
        assertEquals(8, number(db, "SELECT log_start FROM queen.log_partitions WHERE id = ?", p));
        assertEquals(0, number(db, "SELECT count(*) FROM queen.log_partitions WHERE id = ? AND oldest_live_at IS NOT NULL", p));
        assertEquals(8, historyFrames(p, "completed_retention"));
    }

    @Test
    void maxWaitEvictsOldSegmentsWhateverTheCursorsAndNeverTouchesTheDeadLetters() throws SQLException {
        for (int i = 0; i < 3; i++) {
            push(http, "ret-wait", "p", 1);
        }
        exec(db, "UPDATE queen.queues SET max_wait_time_seconds = 600 WHERE name = 'ret-wait'");
        UUID p = partitionId(db, "ret-wait", "p");
        age(db, p, "log_segments", 7200, 7000, 10);
        // A group that consumed nothing and holds a live lease on the old data.
        exec(db, "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed, batch_end, worker_id,"
                + " lease_expires_at) VALUES (?, 'stuck', -1, 1, 'w', now() + interval '5 minutes')", p);
        exec(db, "INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error) VALUES (?, 'stuck', 0, 'boom')", p);

        RetentionCycle.Tally tally = retain();

        assertEquals(List.of(2L), segmentBases(db, p));
        assertEquals(2, historyFrames(p, RetentionCycle.MAX_WAIT_HISTORY_TYPE));
        assertEquals(2, tally.evictedSegments);
        assertEquals(1, number(db, "SELECT count(*) FROM queen.log_dlq WHERE partition_id = ?", p));
    }

    @Test
    void theHashSidecarIsPurgedOnItsOwnWindowOfAtLeast900Seconds() throws SQLException {
        for (int i = 0; i < 2; i++) {
            push(http, "txns-short", "p", 1);
            push(http, "txns-long", "p", 1);
            push(http, "txns-completed", "p", 1);
        }
        // Windows: short = max(600, 0, 900) = 900 s; long = 1200 s; completed = max(0, 2000, 900) = 2000 s.
        exec(db, "UPDATE queen.queues SET dedup_window_seconds = 600 WHERE name = 'txns-short'");
        exec(db, "UPDATE queen.queues SET dedup_window_seconds = 1200 WHERE name = 'txns-long'");
        exec(db, "UPDATE queen.queues SET dedup_window_seconds = 0, completed_retention_seconds = 2000"
                + " WHERE name = 'txns-completed'");
        UUID shortP = partitionId(db, "txns-short", "p");
        UUID longP = partitionId(db, "txns-long", "p");
        UUID completedP = partitionId(db, "txns-completed", "p");
        age(db, shortP, "log_txns", 1000, 800);
        age(db, longP, "log_txns", 1000, 800);
        age(db, completedP, "log_txns", 2100, 1000);

        retain();

        assertEquals(List.of(1L), txnBases(shortP));
        assertEquals(1, number(db, "SELECT txns_start FROM queen.log_partitions WHERE id = ?", shortP));
        assertEquals(List.of(0L, 1L), txnBases(longP));
        assertEquals(List.of(1L), txnBases(completedP));
        // Segments live on their own clock: all still there.
        assertEquals(List.of(0L, 1L), segmentBases(db, shortP));
    }

    @Test
    void cleanupReclaimsOldEmptyPartitionsOnlyAndStepsOverBusyOnes() throws Exception {
        for (String partition : List.of("old-empty", "dead-letters", "busy", "recent")) {
            push(http, "cleanup", partition, 1);
        }
        UUID oldEmpty = partitionId(db, "cleanup", "old-empty");
        UUID deadLetters = partitionId(db, "cleanup", "dead-letters");
        UUID busy = partitionId(db, "cleanup", "busy");
        UUID recent = partitionId(db, "cleanup", "recent");
        exec(db, "DELETE FROM queen.log_segments s USING queen.log_partitions p, queen.queues q"
                + " WHERE s.partition_id = p.id AND p.queue_id = q.id AND q.name = 'cleanup'");
        exec(db, "UPDATE queen.log_partitions SET created_at = now() - interval '40 days',"
                + " last_write_at = now() - interval '40 days', oldest_live_at = NULL WHERE id IN (?, ?, ?)",
                oldEmpty, deadLetters, busy);
        exec(db, "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed, created_at)"
                + " VALUES (?, 'g', 0, now() - interval '40 days')", oldEmpty);
        exec(db, "INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error) VALUES (?, 'g', 0, 'x')",
                deadLetters);

        try (Connection pusher = TestPostgres.connect(db)) {
            // A push in flight holds the partition row lock.
            pusher.setAutoCommit(false);
            execOn(pusher, "SELECT 1 FROM queen.log_partitions WHERE id = ? FOR UPDATE", busy);
            try (Connection c = broker.database().connection()) {
                assertEquals(1, cycle.cleanupPartitions(c));
            }
            pusher.rollback();
        }
        List<Object> left = column(db, "SELECT p.name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = 'cleanup' ORDER BY p.name");
        assertEquals(List.of("busy", "dead-letters", "recent"), left);
        assertEquals(0, number(db, "SELECT count(*) FROM queen.log_txns WHERE partition_id = ?", oldEmpty));
        assertEquals(0, number(db, "SELECT count(*) FROM queen.log_consumers WHERE partition_id = ?", oldEmpty));
        assertEquals(1, number(db, "SELECT count(*) FROM queen.retention_history WHERE partition_id = ?"
                + " AND retention_type = '__partition_deleted__'", oldEmpty));
        assertEquals(1, number(db, "SELECT COALESCE(sum(m.partitions_deleted), 0) FROM queen.queue_lag_metrics m"
                + " JOIN queen.queues q ON q.id = m.queue_id WHERE q.name = 'cleanup'"));

        // Once the push is gone, the idle partition goes too; the dead letters still pin theirs.
        try (Connection c = broker.database().connection()) {
            assertEquals(1, cycle.cleanupPartitions(c));
        }
        assertEquals(List.of("dead-letters", "recent"), column(db, "SELECT p.name FROM queen.log_partitions p"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'cleanup' ORDER BY p.name"));

        // A later push recreates the partition under a new id, offsets from 0.
        push(http, "cleanup", "old-empty", 1);
        UUID again = partitionId(db, "cleanup", "old-empty");
        assertNotEquals(oldEmpty, again);
        assertEquals(List.of(0L), segmentBases(db, again));
    }

    @Test
    void metricsOlderThanTheRetentionDaysAreAgedOut() throws SQLException {
        exec(db, "INSERT INTO queen.system_metrics (\"timestamp\", hostname, port, worker_id, metrics)"
                + " VALUES (now() - interval '100 days', 'old', 1, 'w', '{}'), (now() - interval '1 day', 'new', 1, 'w', '{}')");
        exec(db, "INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type, executed_at)"
                + " VALUES (NULL, 1, 'retention', now() - interval '100 days')");
        try (Connection c = broker.database().connection()) {
            assertTrue(cycle.ageOutMetrics(c) >= 2);
        }
        assertEquals(List.of("new"), column(db, "SELECT hostname FROM queen.system_metrics WHERE hostname IN ('old', 'new')"));
        assertEquals(0, number(db, "SELECT count(*) FROM queen.retention_history WHERE executed_at < now() - interval '90 days'"));
    }

    private static List<Long> txnBases(UUID partition) {
        return column(db, "SELECT base_offset FROM queen.log_txns WHERE partition_id = ? ORDER BY base_offset",
                partition).stream().map(o -> ((Number) o).longValue()).toList();
    }

    private static void execOn(Connection c, String sql, Object... args) throws SQLException {
        try (var ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.execute();
        }
    }
}
