package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

/**
 * JDBC of the status, analytics and metrics readers (011, 013 analytics block, 015, 018, 021,
 * 022, 023): one function call per method, every value bound, the function's JSON returned as
 * text for the route to serve as is. Methods take the caller's connection; each call is one
 * read-only statement.
 */
public final class ObservabilityStore {

    private ObservabilityStore() {
    }

    public static String status(Connection c, Instant from, Instant to, String queue, String namespace, String task)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.get_status_v3(?, ?, ?, ?, ?)::text")) {
            setInstant(ps, 1, from);     // p_from
            setInstant(ps, 2, to);       // p_to
            ps.setString(3, queue);      // p_queue (NULL = every queue)
            ps.setString(4, namespace);  // p_namespace
            ps.setString(5, task);       // p_task
            return json(ps);
        }
    }

    public static String statusQueues(Connection c, UUID tenant, String queue, String namespace, String task,
                                      int limit, int offset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.get_status_queues_v2(?, ?, ?, ?, ?, ?)::text")) {
            ps.setObject(1, tenant);     // p_tenant
            ps.setString(2, queue);      // p_queue
            ps.setString(3, namespace);  // p_namespace
            ps.setString(4, task);       // p_task
            ps.setInt(5, limit);         // p_limit
            ps.setInt(6, offset);        // p_offset
            return json(ps);
        }
    }

    /** Null when the tenant has no queue of that name. */
    public static String queueDetail(Connection c, UUID tenant, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.get_queue_detail_v2(?, ?)::text")) {
            ps.setString(1, queue);      // p_queue
            ps.setObject(2, tenant);     // p_tenant
            return json(ps);
        }
    }

    public static String messageVolume(Connection c, UUID tenant, Instant from, Instant to, String interval,
                                       String queue, String namespace, String task) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.get_analytics_v1(?, ?, ?, ?, ?, ?, ?)::text")) {
            ps.setObject(1, tenant);     // p_tenant
            setInstant(ps, 2, from);     // p_from
            setInstant(ps, 3, to);       // p_to
            ps.setString(4, interval);   // p_interval: minute | hour | day
            ps.setString(5, queue);      // p_queue
            ps.setString(6, namespace);  // p_namespace
            ps.setString(7, task);       // p_task
            return json(ps);
        }
    }

    public static String systemMetrics(Connection c, Instant from, Instant to, String hostname, String workerId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.get_system_metrics_v1(?, ?, ?, ?)::text")) {
            setInstant(ps, 1, from);     // p_from
            setInstant(ps, 2, to);       // p_to
            ps.setString(3, hostname);   // p_hostname
            ps.setString(4, workerId);   // p_worker_id (system_metrics.worker_id is text)
            return json(ps);
        }
    }

    public static String workerMetrics(Connection c, Instant from, Instant to, String queue, String hostname,
                                       Integer workerId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.get_worker_metrics_timeseries_v1(?, ?, ?, ?, ?)::text")) {
            setInstant(ps, 1, from);     // p_from
            setInstant(ps, 2, to);       // p_to
            ps.setString(3, queue);      // p_queue
            ps.setString(4, hostname);   // p_hostname
            if (workerId == null) {      // p_worker_id (worker_metrics.worker_id is integer)
                ps.setNull(5, Types.INTEGER);
            } else {
                ps.setInt(5, workerId);
            }
            return json(ps);
        }
    }

    public static String queueLag(Connection c, UUID tenant, Instant from, Instant to, String queue)
            throws SQLException {
        return tenantSeries(c, "SELECT queen.get_queue_lag_v1(?, ?, ?, ?)::text", tenant, from, to, queue);
    }

    public static String queueOps(Connection c, UUID tenant, Instant from, Instant to, String queue)
            throws SQLException {
        return tenantSeries(c, "SELECT queen.get_queue_ops_v1(?, ?, ?, ?)::text", tenant, from, to, queue);
    }

    public static String parkedReplicas(Connection c, UUID tenant, Instant from, Instant to, String queue)
            throws SQLException {
        return tenantSeries(c, "SELECT queen.get_queue_parked_per_replica_v1(?, ?, ?, ?)::text",
                tenant, from, to, queue);
    }

    public static String retention(Connection c, UUID tenant, Instant from, Instant to, String queue)
            throws SQLException {
        return tenantSeries(c, "SELECT queen.get_retention_timeseries_v1(?, ?, ?, ?)::text", tenant, from, to, queue);
    }

    /**
     * The retention answer plus {@code rows}: per group of the tenant's queues (key = queue name,
     * task or namespace, '' for none), the number of queues with events and their totals, largest
     * totalMsgs first. The series and totals are the function's own, byte for byte; the grouping is
     * plain SQL over the same audit rows and filters.
     *
     * @param groupBy namespace, task or queue
     */
    public static String retentionGrouped(Connection c, UUID tenant, Instant from, Instant to, String queue,
                                          String groupBy) throws SQLException {
        String sql = """
                SELECT (queen.get_retention_timeseries_v1(?, ?, ?, ?) || jsonb_build_object('rows', COALESCE((
                    SELECT jsonb_agg(jsonb_build_object(
                               'key', g.key,
                               'queues', g.queues,
                               'totals', jsonb_build_object(
                                   'retentionMsgs', g.retention,
                                   'completedRetentionMsgs', g.completed,
                                   'evictionMsgs', g.eviction,
                                   'totalMsgs', g.total,
                                   'eventCount', g.events))
                           ORDER BY g.total DESC, g.key COLLATE "C")
                      FROM (SELECT CASE CAST(? AS text)
                                       WHEN 'queue' THEN q.name::text
                                       WHEN 'task' THEN COALESCE(q.task, '')::text
                                       ELSE COALESCE(q.namespace, '')::text
                                   END AS key,
                                   count(DISTINCT q.id) AS queues,
                                   COALESCE(sum(h.messages_deleted) FILTER (WHERE h.retention_type = 'retention'), 0)
                                       AS retention,
                                   COALESCE(sum(h.messages_deleted)
                                       FILTER (WHERE h.retention_type = 'completed_retention'), 0) AS completed,
                                   COALESCE(sum(h.messages_deleted)
                                       FILTER (WHERE h.retention_type = 'max_wait_time_eviction'), 0) AS eviction,
                                   COALESCE(sum(h.messages_deleted), 0) AS total,
                                   count(*) AS events
                              FROM queen.retention_history h
                              JOIN queen.log_partitions p ON p.id = h.partition_id
                              JOIN queen.queues q ON q.id = p.queue_id
                             WHERE q.tenant_id = ?
                               AND (CAST(? AS text) IS NULL OR q.name = ?)
                               AND h.executed_at >= ? AND h.executed_at <= ?
                               AND h.retention_type NOT LIKE '\\_\\_%\\_\\_' ESCAPE '\\'
                             GROUP BY 1) g), '[]'::jsonb)))::text
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);     // p_tenant
            setInstant(ps, 2, from);     // p_from
            setInstant(ps, 3, to);       // p_to
            ps.setString(4, queue);      // p_queue
            ps.setString(5, groupBy);    // grouping key
            ps.setObject(6, tenant);     // q.tenant_id
            ps.setString(7, queue);      // queue filter (NULL = every queue)
            ps.setString(8, queue);
            setInstant(ps, 9, from);     // window start
            setInstant(ps, 10, to);      // window end
            return json(ps);
        }
    }

    public static String postgresStats(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.get_postgres_stats_v1()::text")) {
            return json(ps);
        }
    }

    /** The database-backed Prometheus families as one JSON document (023). */
    public static String prometheusFamilies(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.get_prometheus_metrics_v1()::text")) {
            return json(ps);
        }
    }

    /**
     * The one writer here: runs the stats cycle's refresh of queen.stats now (028,
     * queen.log_stats_refresh_v1) and returns its row counts.
     */
    public static String refreshStats(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_stats_refresh_v1()::text")) {
            return json(ps);
        }
    }

    /** The four per-tenant series readers share one signature: (tenant, from, to, queue). */
    private static String tenantSeries(Connection c, String sql, UUID tenant, Instant from, Instant to, String queue)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);     // p_tenant
            setInstant(ps, 2, from);     // p_from
            setInstant(ps, 3, to);       // p_to
            ps.setString(4, queue);      // p_queue (NULL = every queue of the tenant)
            return json(ps);
        }
    }

    private static String json(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        ps.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
    }
}
