package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Plain-SQL reads behind the 1.5.3 workload analytics (broker/DESIGN.md, Management plane): the dead-letter
 * error signatures of one queue, the partition liveness of the tenant's queues, and the two row
 * sets the workload report is built from. Every value is bound; every query is scoped by the
 * caller's tenant and only reads.
 */
public final class AnalyticsStore {

    /** One queue of the tenant with its current gauges (the stats refresh's 'queue' row, 0 before the first). */
    public record QueueNow(UUID id, String name, String namespace, String task, long pending, long processing,
                           long deadLetter, long retainedBytes, long partitions, long groups) {
    }

    /**
     * The per-minute counters of one queue summed over one bucket. {@code lagWeight} is
     * sum(avg_lag_ms x pop_count); {@code maxLagPopped} the largest max_lag_ms of a minute that
     * popped something, null when none did; {@code parkedSum} and {@code minutes} give the bucket's
     * average parked gauge.
     */
    public record QueueBucket(UUID queueId, Instant bucket, long pushRequests, long pushMessages, long popMessages,
                              long popEmpty, long ackRequests, long ackSuccess, long ackFailed, long transactions,
                              long conflated, long partitionsCreated, long partitionsDeleted, long lagWeight,
                              Long maxLagPopped, long parkedSum, long minutes) {
    }

    private AnalyticsStore() {
    }

    /**
     * The error signatures of the newest {@code limit} dead letters of one queue, as JSON: {queue,
     * rowsNow, sample, retryCounts, groups, oldest, newest, avgBytes, signatures:[{text, n, share}]
     * (top 8), byDay:[{day, n}]}. A signature is the error text with its variable parts folded, in
     * this order: UUIDs and hex words of 20+ digits to {@code <id>}, ISO dates (with an optional
     * time) to {@code <date>}, digit words to {@code <n>}, whitespace runs to one space; trimmed and
     * cut at 120 characters; an empty error reads {@code (no message)}. The fold and the key names
     * are the ones the reference broker answers; payloads are only measured, never read.
     */
    public static String deadLetterSignatures(Connection c, UUID tenant, String queue, int limit)
            throws SQLException {
        String sql = """
                WITH dlq AS (
                    SELECT d.consumer_group, d.error, COALESCE(d.retry_count, 0) AS retry_count, d.failed_at,
                           COALESCE(octet_length(d.payload::text), 0) AS bytes
                      FROM queen.log_dlq d
                      JOIN queen.log_partitions p ON p.id = d.partition_id
                      JOIN queen.queues q ON q.id = p.queue_id
                     WHERE q.tenant_id = ? AND q.name = ?
                ),
                sample AS (
                    SELECT * FROM dlq ORDER BY failed_at DESC LIMIT ?
                ),
                folded AS (
                    SELECT s.*,
                           left(btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                               COALESCE(NULLIF(btrim(s.error), ''), '(no message)'),
                               '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}', '<id>', 'g'),
                               '\\m[0-9A-Fa-f]{20,}\\M', '<id>', 'g'),
                               '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]+Z?)?', '<date>', 'g'),
                               '\\m[0-9]+\\M', '<n>', 'g'),
                               '\\s+', ' ', 'g')), 120) AS signature
                      FROM sample s
                ),
                n AS (SELECT count(*) AS sample FROM sample)
                SELECT jsonb_build_object(
                    'queue', CAST(? AS text),
                    'rowsNow', (SELECT count(*) FROM dlq),
                    'sample', (SELECT sample FROM n),
                    'retryCounts', COALESCE((SELECT jsonb_agg(r ORDER BY r)
                                               FROM (SELECT DISTINCT retry_count AS r FROM sample) x), '[]'::jsonb),
                    'groups', COALESCE((SELECT jsonb_agg(g ORDER BY g COLLATE "C")
                                          FROM (SELECT DISTINCT consumer_group AS g FROM sample) x), '[]'::jsonb),
                    'oldest', (SELECT queen.obs_iso_v1(min(failed_at)) FROM sample),
                    'newest', (SELECT queen.obs_iso_v1(max(failed_at)) FROM sample),
                    'avgBytes', COALESCE((SELECT round(avg(bytes))::bigint FROM sample), 0),
                    'signatures', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                                      'text', t.signature, 'n', t.k,
                                                      'share', round(t.k::numeric / (SELECT sample FROM n), 3))
                                                  ORDER BY t.k DESC, t.signature COLLATE "C")
                                              FROM (SELECT signature, count(*) AS k FROM folded GROUP BY signature
                                                    ORDER BY count(*) DESC, signature COLLATE "C" LIMIT 8) t),
                                           '[]'::jsonb),
                    'byDay', COALESCE((SELECT jsonb_agg(jsonb_build_object('day', d.day, 'n', d.k) ORDER BY d.day)
                                         FROM (SELECT to_char(failed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                                                      count(*) AS k
                                                 FROM sample GROUP BY 1) d), '[]'::jsonb)
                )::text
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);     // q.tenant_id
            ps.setString(2, queue);      // q.name
            ps.setInt(3, limit);         // sample size
            ps.setString(4, queue);      // echoed queue
            return json(ps);
        }
    }

    /**
     * Per queue of the tenant: its partitions, how many were written in the last hour, day and
     * week and created in the last day, the span of their last writes and the queue's pending
     * count; the {@code limit} queues with the most partitions, as {capturedAt, rows:[...]} (the key
     * names the reference broker answers). A null filter is no filter; an empty namespace or task
     * selects the queues without one.
     */
    public static String partitionLiveness(Connection c, UUID tenant, String queue, String namespace, String task,
                                           int limit) throws SQLException {
        String sql = """
                WITH qs AS (
                    SELECT q.id, q.name, COALESCE(q.namespace, '') AS ns, COALESCE(q.task, '') AS tk
                      FROM queen.queues q
                     WHERE q.tenant_id = ?
                       AND (CAST(? AS text) IS NULL OR q.name = ?)
                       AND (CAST(? AS text) IS NULL OR COALESCE(q.namespace, '') = ?)
                       AND (CAST(? AS text) IS NULL OR COALESCE(q.task, '') = ?)
                ),
                per AS (
                    SELECT qs.id, qs.name, qs.ns, qs.tk,
                           count(p.id) AS parts,
                           count(*) FILTER (WHERE p.last_write_at > now() - interval '1 hour') AS live1h,
                           count(*) FILTER (WHERE p.last_write_at > now() - interval '24 hours') AS live24h,
                           count(*) FILTER (WHERE p.last_write_at > now() - interval '7 days') AS live7d,
                           count(*) FILTER (WHERE p.created_at > now() - interval '24 hours') AS created24h,
                           min(p.last_write_at) AS oldest, max(p.last_write_at) AS newest
                      FROM qs
                      LEFT JOIN queen.log_partitions p ON p.queue_id = qs.id
                     GROUP BY qs.id, qs.name, qs.ns, qs.tk
                     ORDER BY count(p.id) DESC, qs.name COLLATE "C"
                     LIMIT ?
                )
                SELECT jsonb_build_object(
                    'capturedAt', queen.obs_iso_v1(now()),
                    'rows', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                                'queue', per.name, 'namespace', per.ns, 'task', per.tk,
                                                'partitions', per.parts, 'live1h', per.live1h,
                                                'live24h', per.live24h, 'live7d', per.live7d,
                                                'created24h', per.created24h,
                                                'oldestWriteAt', queen.obs_iso_v1(per.oldest),
                                                'newestWriteAt', queen.obs_iso_v1(per.newest),
                                                -- pending counts leased messages too, as the stats refresh does
                                                'pending', COALESCE(st.pending_messages, 0))
                                            ORDER BY per.parts DESC, per.name COLLATE "C")
                                        FROM per
                                        LEFT JOIN queen.stats st ON st.stat_type = 'queue' AND st.queue_id = per.id),
                                     '[]'::jsonb)
                )::text
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);       // q.tenant_id
            ps.setString(2, queue);        // queue filter (NULL = any)
            ps.setString(3, queue);
            ps.setString(4, namespace);    // namespace filter ('' = none set)
            ps.setString(5, namespace);
            ps.setString(6, task);         // task filter ('' = none set)
            ps.setString(7, task);
            ps.setInt(8, limit);           // queues answered
            return json(ps);
        }
    }

    /** Every queue of the tenant, idle ones included, with its current gauges and its queue-level groups. */
    public static List<QueueNow> queuesNow(Connection c, UUID tenant) throws SQLException {
        String sql = """
                SELECT q.id, q.name, q.namespace, q.task,
                       COALESCE(st.pending_messages, 0), COALESCE(st.processing_messages, 0),
                       COALESCE(st.dead_letter_messages, 0), COALESCE(st.retained_bytes, 0),
                       COALESCE(st.child_count, 0),
                       (SELECT count(*) FROM queen.consumer_groups_metadata g
                         WHERE g.queue_id = q.id AND g.partition_name = '')
                  FROM queen.queues q
                  LEFT JOIN queen.stats st ON st.stat_type = 'queue' AND st.queue_id = q.id
                 WHERE q.tenant_id = ?
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);       // q.tenant_id
            List<QueueNow> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new QueueNow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8),
                            rs.getLong(9), rs.getLong(10)));
                }
            }
            return out;
        }
    }

    /** The tenant's per-queue minute counters of the window, summed per queue and {@code bucketMinutes} bucket. */
    public static List<QueueBucket> queueBuckets(Connection c, UUID tenant, Instant from, Instant to,
                                                 int bucketMinutes) throws SQLException {
        String sql = """
                SELECT m.queue_id, queen.obs_bucket_v1(m.bucket_time, ?) AS bucket,
                       sum(COALESCE(m.push_request_count, 0)), sum(COALESCE(m.push_message_count, 0)),
                       sum(COALESCE(m.pop_count, 0)), sum(COALESCE(m.pop_empty_count, 0)),
                       sum(COALESCE(m.ack_request_count, 0)), sum(COALESCE(m.ack_success_count, 0)),
                       sum(COALESCE(m.ack_failed_count, 0)), sum(COALESCE(m.transaction_count, 0)),
                       sum(COALESCE(m.conflated_count, 0)), sum(COALESCE(m.partitions_created, 0)),
                       sum(COALESCE(m.partitions_deleted, 0)),
                       sum(COALESCE(m.avg_lag_ms, 0)::numeric * COALESCE(m.pop_count, 0)),
                       max(m.max_lag_ms) FILTER (WHERE m.pop_count > 0),
                       sum(COALESCE(m.parked_count, 0)), count(*)
                  FROM queen.queue_lag_metrics m
                  JOIN queen.queues q ON q.id = m.queue_id
                 WHERE q.tenant_id = ? AND m.bucket_time >= ? AND m.bucket_time <= ?
                 GROUP BY 1, 2
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setInt(1, bucketMinutes);   // bucket width
            ps.setObject(2, tenant);       // q.tenant_id
            setInstant(ps, 3, from);       // window start
            setInstant(ps, 4, to);         // window end
            List<QueueBucket> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long maxLag = rs.getLong(15);
                    Long maxLagPopped = rs.wasNull() ? null : maxLag;
                    out.add(new QueueBucket(rs.getObject(1, UUID.class),
                            rs.getObject(2, OffsetDateTime.class).toInstant(), rs.getLong(3), rs.getLong(4),
                            rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getLong(9),
                            rs.getLong(10), rs.getLong(11), rs.getLong(12), rs.getLong(13),
                            rs.getBigDecimal(14).longValue(), maxLagPopped, rs.getLong(16), rs.getLong(17)));
                }
            }
            return out;
        }
    }

    /** The bucket width the status and analytics series use for the window (queen.obs_bucket_minutes_v1). */
    public static int bucketMinutes(Connection c, Instant from, Instant to) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.obs_bucket_minutes_v1(?, ?)")) {
            setInstant(ps, 1, from);       // p_from
            setInstant(ps, 2, to);         // p_to
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static String json(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
        }
    }
}
