package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * JDBC of the background jobs: the retention steps of 006_log_maintenance, the metrics retention
 * step and the worker/system metrics writes (tables of 019_worker_metrics and schema.sql), and the
 * stats writers of 028_retained_bytes.
 * Each method is one autocommitted statement on the caller's connection, every value bound.
 * Background jobs are cell-wide: nothing here is scoped by tenant.
 */
public final class MaintenanceStore {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * One partition with something due, and its queue's cutoffs from one database now(); a null
     * cutoff means the rule does not apply to the queue.
     */
    public record WorkItem(UUID partitionId, UUID queueId, String queueName, OffsetDateTime allCutoff,
                           OffsetDateTime completedCutoff, OffsetDateTime maxWaitCutoff,
                           OffsetDateTime txnsCutoff, boolean segmentsDue, boolean txnsDue) {
    }

    /** What one bounded step did: rows deleted, frames they held (segments only), and whether to stop. */
    public record Step(long deleted, long frames, boolean done) {
        static Step of(JsonNode json) {
            return new Step(json.path("deleted").asLong(0), json.path("frames").asLong(0),
                    json.path("done").asBoolean(true));
        }
    }

    /** One replica's worker_metrics row: counters are deltas since its previous row. */
    public record WorkerMetricsRow(String hostname, int workerId, int pid, OffsetDateTime bucketTime,
                                   int avgFreeSlots, int minFreeSlots, int dbConnections,
                                   int avgJobQueueSize, int maxJobQueueSize,
                                   long pushRequests, long popRequests, long ackRequests,
                                   long pushMessages, long popMessages, long ackMessages,
                                   long ackSuccess, long ackFailed) {
    }

    private MaintenanceStore() {
    }

    public static List<WorkItem> retentionWork(Connection c) throws SQLException {
        List<WorkItem> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT partition_id, queue_id, queue_name, all_cutoff, completed_cutoff, max_wait_cutoff,"
                        + " txns_cutoff, segments_due, txns_due FROM queen.log_retention_work_v1()");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new WorkItem(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getString(3),
                        rs.getObject(4, OffsetDateTime.class), rs.getObject(5, OffsetDateTime.class),
                        rs.getObject(6, OffsetDateTime.class), rs.getObject(7, OffsetDateTime.class),
                        rs.getBoolean(8), rs.getBoolean(9)));
            }
        }
        return out;
    }

    /** Retention rules "all" and "completed" (either cutoff may be null), or max-wait eviction with its history type. */
    public static Step retentionStep(Connection c, UUID partitionId, OffsetDateTime allCutoff,
                                     OffsetDateTime completedCutoff, int maxRows, String historyType)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_retention_step_v1(?, ?, ?, ?, ?)::text")) {
            ps.setObject(1, partitionId);                     // p_partition_id
            setTimestamp(ps, 2, allCutoff);                   // p_all_cutoff
            setTimestamp(ps, 3, completedCutoff);             // p_completed_cutoff
            ps.setInt(4, maxRows);                            // p_max_rows
            if (historyType == null) {                        // p_history_type (NULL = by rule)
                ps.setNull(5, Types.VARCHAR);
            } else {
                ps.setString(5, historyType);
            }
            return Step.of(json(ps));
        }
    }

    public static Step txnsPurgeStep(Connection c, UUID partitionId, OffsetDateTime cutoff, int maxRows)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_txns_purge_step_v1(?, ?, ?)::text")) {
            ps.setObject(1, partitionId);    // p_partition_id
            setTimestamp(ps, 2, cutoff);     // p_cutoff
            ps.setInt(3, maxRows);           // p_max_rows
            return Step.of(json(ps));
        }
    }

    /** Reclaims empty partitions idle for {@code idleDays}, measured on the database clock. */
    public static Step partitionCleanupStep(Connection c, int idleDays, int maxRows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.log_partition_cleanup_step_v1(now() - make_interval(days => ?), ?)::text")) {
            ps.setInt(1, idleDays);   // p_cutoff = now() - idleDays
            ps.setInt(2, maxRows);    // p_max_rows
            return Step.of(json(ps));
        }
    }

    /** Deletes one batch of metrics and retention-history rows older than {@code days}. */
    public static JsonNode metricsRetentionStep(Connection c, int days, int maxRows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.metrics_retention_step_v1(now() - make_interval(days => ?), ?)::text")) {
            ps.setInt(1, days);      // p_cutoff = now() - days
            ps.setInt(2, maxRows);   // p_max_rows
            return json(ps);
        }
    }

    public static JsonNode statsRefresh(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_stats_refresh_v1()::text")) {
            return json(ps);
        }
    }

    public static JsonNode refreshRetainedBytes(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_refresh_retained_bytes_v1()::text")) {
            return json(ps);
        }
    }

    /**
     * One system-metrics sample of this replica, bucketed to the minute of {@code at}; a second
     * flush inside the same minute replaces the first.
     */
    public static void writeSystemMetrics(Connection c, OffsetDateTime at, String hostname, int port,
                                          String workerId, int sampleCount, String metricsJson) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO queen.system_metrics ("timestamp", hostname, port, worker_id, sample_count, metrics)
                VALUES (date_trunc('minute', ?::timestamptz), ?, ?, ?, ?, ?::jsonb)
                ON CONFLICT ("timestamp", hostname, port, worker_id) DO UPDATE
                   SET sample_count = EXCLUDED.sample_count, metrics = EXCLUDED.metrics""")) {
            ps.setObject(1, at);             // "timestamp" (minute bucket)
            ps.setString(2, hostname);       // hostname
            ps.setInt(3, port);              // port
            ps.setString(4, workerId);       // worker_id
            ps.setInt(5, sampleCount);       // sample_count
            ps.setString(6, metricsJson);    // metrics
            ps.executeUpdate();
        }
    }

    /**
     * Inserts one worker_metrics row (bucket_time to the millisecond, so every flush is its own row
     * and the summary trigger sees each exactly once). False when an identical key already exists.
     */
    public static boolean writeWorkerMetrics(Connection c, WorkerMetricsRow r) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO queen.worker_metrics (hostname, worker_id, pid, bucket_time,
                    avg_free_slots, min_free_slots, db_connections, avg_job_queue_size, max_job_queue_size,
                    push_request_count, pop_request_count, ack_request_count,
                    push_message_count, pop_message_count, ack_message_count, ack_success_count, ack_failed_count)
                VALUES (?, ?, ?, date_trunc('milliseconds', ?::timestamptz), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (hostname, worker_id, pid, bucket_time) DO NOTHING""")) {
            ps.setString(1, r.hostname());          // hostname
            ps.setInt(2, r.workerId());             // worker_id
            ps.setInt(3, r.pid());                  // pid
            ps.setObject(4, r.bucketTime());        // bucket_time
            ps.setInt(5, r.avgFreeSlots());         // avg_free_slots
            ps.setInt(6, r.minFreeSlots());         // min_free_slots
            ps.setInt(7, r.dbConnections());        // db_connections
            ps.setInt(8, r.avgJobQueueSize());      // avg_job_queue_size
            ps.setInt(9, r.maxJobQueueSize());      // max_job_queue_size
            ps.setLong(10, r.pushRequests());       // push_request_count
            ps.setLong(11, r.popRequests());        // pop_request_count
            ps.setLong(12, r.ackRequests());        // ack_request_count
            ps.setLong(13, r.pushMessages());       // push_message_count
            ps.setLong(14, r.popMessages());        // pop_message_count
            ps.setLong(15, r.ackMessages());        // ack_message_count
            ps.setLong(16, r.ackSuccess());         // ack_success_count
            ps.setLong(17, r.ackFailed());          // ack_failed_count
            return ps.executeUpdate() == 1;
        }
    }

    private static JsonNode json(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            String text = rs.getString(1);
            try {
                return text == null ? MAPPER.createObjectNode() : MAPPER.readTree(text);
            } catch (java.io.IOException e) {
                throw new SQLException("unreadable step result: " + text, e);
            }
        }
    }

    private static void setTimestamp(PreparedStatement ps, int index, OffsetDateTime value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, value);
        }
    }
}
