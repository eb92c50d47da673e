package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * All JDBC of the message path: each method is one call of a procedure in 003_log_push, 004_log_pop
 * or 005_log_ack, with every value bound. Methods take the caller's connection so the engine decides
 * transaction boundaries.
 */
public final class LogStore {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public record Provisioned(UUID queueId, UUID partitionId, int dedupWindowSeconds, boolean encryptionEnabled) {
    }

    /** {@code queued} with the first offset, or {@code duplicate} with (item index, original offset) pairs. */
    public record PushVerdict(boolean queued, long baseOffset, Instant createdAt, List<long[]> duplicates) {
    }

    public record Candidate(UUID partitionId, String partitionName) {
    }

    /** The queue's minPopWaitTime (0 = off) and, when on, the messages a claim could take now (up to a cap). */
    public record Fill(int minPopWaitMs, int claimable) {
    }

    /**
     * One claim of {@code log_pop_v1}: up to {@code batch} frames of one partition for one group.
     * {@code workerId} is the lease id ("" under {@code autoAck}); {@code leaseSeconds} 0 is the
     * queue's leaseTime; the subscription seeds a cursor the claim creates; {@code conflate} takes
     * only the newest visible message, leased over the whole span up to it.
     */
    public record PopQuery(UUID partitionId, String group, int batch, int leaseSeconds, String workerId,
                           boolean autoAck, String subscriptionMode, Instant subscriptionFrom, boolean conflate) {
    }

    /** One segment to deliver from: frames [startOff, startOff + take) of the blob. */
    public record ClaimedSegment(long seq, int startOff, int take, int msgCount, Instant createdAt, byte[] blob, int attempt) {
    }

    /**
     * What {@link #ackCompleted} did: {@code applied} false means nothing was written; {@code more}:
     * the lease ended with messages waiting behind the new cursor.
     */
    public record CompletedAck(boolean applied, boolean released, boolean more, String queueName,
                               String partitionName) {
    }

    /**
     * What an ack group needs to know, read under the cursor row's lock. When the cursor is missing
     * or the partition is another tenant's, only the two flags are set and the groups are null.
     */
    public record AckState(boolean consumerFound, boolean tenantOk, AckCursor cursor, AckLease lease,
                           AckPolicy policy, AckResolution resolved) {
        static AckState refused(boolean consumerFound, boolean tenantOk) {
            return new AckState(consumerFound, tenantOk, null, null, null, null);
        }
    }

    /** The group's cursor on the partition, and the partition's last offset and names. */
    public record AckCursor(long committed, long lastOffset, String queueName, String partitionName) {
    }

    /** The lease on the cursor: its batch end (null when none), holder, and whether it is live. */
    public record AckLease(Long batchEnd, String workerId, boolean live, boolean conflated, int batchRetryCount) {
    }

    /** The queue's retry budget and dead-letter switch. */
    public record AckPolicy(int retryLimit, boolean dlqEnabled) {
    }

    /** Where each acked transactionId resolved: its offset in the span (null: not found), or below the cursor. */
    public record AckResolution(Long[] spanOffsets, Boolean[] belowCursor) {
    }

    public record Segment(long baseOffset, long endOffset, Instant createdAt, byte[] blob) {
    }

    private LogStore() {
    }

    public static Provisioned provision(Connection c, UUID tenant, String queue, String partition) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_provision_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setString(2, queue);           // p_queue
            ps.setString(3, partition);       // p_partition (NULL = queue only)
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Provisioned(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getInt(3),
                        rs.getBoolean(4));
            }
        }
    }

    /**
     * The named partitions of a queue, created where missing in one statement
     * ({@code log_provision_partitions_v1}), by name; the queue is created too if it is new.
     */
    public static Map<String, Provisioned> provisionPartitions(Connection c, UUID tenant, String queue,
                                                               List<String> partitions) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT * FROM queen.log_provision_partitions_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);                                             // p_tenant
            ps.setString(2, queue);                                              // p_queue
            ps.setArray(3, c.createArrayOf("text", partitions.toArray()));       // p_partitions
            Map<String, Provisioned> out = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(3), new Provisioned(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class),
                            rs.getInt(4), rs.getBoolean(5)));
                }
            }
            return out;
        }
    }

    /** The id of a named partition of a queue, or null; a pop never creates partitions. */
    public static UUID partitionId(Connection c, UUID queueId, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id FROM queen.log_partitions WHERE queue_id = ? AND name = ?")) {
            ps.setObject(1, queueId);  // queue_id
            ps.setString(2, name);     // name
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getObject(1, UUID.class) : null;
            }
        }
    }

    public record QueueRef(UUID id, String name) {
    }

    /** Queues of a tenant matching a namespace and/or task (discovery pop), in random order. */
    public static List<QueueRef> queuesMatching(Connection c, UUID tenant, String namespace, String task)
            throws SQLException {
        String sql = """
                SELECT id, name FROM queen.queues
                WHERE tenant_id = ? AND (?::text IS NULL OR namespace = ?) AND (?::text IS NULL OR task = ?)
                ORDER BY random()
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);     // tenant_id
            ps.setString(2, namespace);  // namespace filter (NULL = any)
            ps.setString(3, namespace);
            ps.setString(4, task);       // task filter (NULL = any)
            ps.setString(5, task);
            List<QueueRef> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new QueueRef(rs.getObject(1, UUID.class), rs.getString(2)));
                }
            }
            return out;
        }
    }

    /** Locks the partitions in ascending id order (broker/DESIGN.md, Lock order) for a multi-partition write. */
    public static void lockPartitions(Connection c, List<UUID> partitionIds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_lock_partitions_v1(?)")) {
            ps.setArray(1, c.createArrayOf("uuid", partitionIds.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // Drain: the locks are what matters.
                }
            }
        }
    }

    /**
     * @param dedupWindowSeconds null = the queue's current setting
     * @param vouchedFrom        with vouchedTo, the sidecar rows the broker's dedup cache vouches for (null: none)
     */
    public static PushVerdict pushOne(Connection c, UUID partitionId, int count, byte[] blob, byte[] hashes,
                                      Integer dedupWindowSeconds, boolean probe, Long vouchedFrom, Long vouchedTo)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_push_one_v1(?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, partitionId);      // p_partition_id
            ps.setInt(2, count);               // p_count
            ps.setBytes(3, blob);              // p_blob
            ps.setBytes(4, hashes);            // p_hashes
            if (dedupWindowSeconds == null) {   // p_dedup_window_seconds
                ps.setNull(5, Types.INTEGER);
            } else {
                ps.setInt(5, dedupWindowSeconds);
            }
            ps.setBoolean(6, probe);           // p_probe
            ps.setObject(7, vouchedFrom, Types.BIGINT);  // p_vouched_from
            ps.setObject(8, vouchedTo, Types.BIGINT);    // p_vouched_to
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                JsonNode v = MAPPER.readTree(rs.getString(1));
                if ("queued".equals(v.path("status").asText())) {
                    return new PushVerdict(true, v.get("baseOffset").asLong(),
                            java.time.OffsetDateTime.parse(v.get("createdAt").asText()).toInstant(), List.of());
                }
                List<long[]> dups = new ArrayList<>();
                for (JsonNode d : v.path("dups")) {
                    dups.add(new long[] {d.get("i").asLong(), d.get("off").asLong()});
                }
                return new PushVerdict(false, -1, null, dups);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new SQLException("log_push_one_v1 returned unreadable JSON", e);
            }
        }
    }

    /** The segment holding the offset, or null when retention removed it. */
    public static Segment segmentCovering(Connection c, UUID partitionId, long offset) throws SQLException {
        String sql = """
                SELECT base_offset, end_offset, created_at, blob FROM queen.log_segments
                WHERE partition_id = ? AND base_offset <= ? ORDER BY base_offset DESC LIMIT 1
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, partitionId);  // partition_id
            ps.setLong(2, offset);         // base_offset upper bound
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rs.getLong(2) < offset) {
                    return null;
                }
                return new Segment(rs.getLong(1), rs.getLong(2), rs.getTimestamp(3).toInstant(), rs.getBytes(4));
            }
        }
    }

    /** Registers the group on the queue (a no-op when it is registered); returns its stored conflation policy. */
    public static boolean registerGroup(Connection c, UUID tenant, UUID queueId, String group, String subMode,
                                        Instant subFrom, boolean conflation) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_register_group_v1(?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);         // p_tenant
            ps.setObject(2, queueId);        // p_queue_id
            ps.setString(3, group);          // p_group
            ps.setString(4, subMode);        // p_sub_mode
            setInstant(ps, 5, subFrom);      // p_sub_from
            ps.setBoolean(6, conflation);    // p_conflation
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** The group's stored conflation policy on the queue, or null when it has not registered there. */
    public static Boolean groupPolicy(Connection c, UUID queueId, String group) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_group_policy_v1(?, ?)")) {
            ps.setObject(1, queueId);  // p_queue_id
            ps.setString(2, group);    // p_group
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                boolean v = rs.getBoolean(1);
                return rs.wasNull() ? null : v;
            }
        }
    }

    public static Fill fill(Connection c, UUID queueId, String group, int cap) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_pop_fill_v1(?, ?, ?)")) {
            ps.setObject(1, queueId);  // p_queue_id
            ps.setString(2, group);    // p_group
            ps.setInt(3, cap);         // p_cap
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Fill(rs.getInt(1), rs.getInt(2)) : new Fill(0, 0);
            }
        }
    }

    public static List<Candidate> candidates(Connection c, UUID queueId, String group, int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_pop_candidates_v1(?, ?, ?)")) {
            ps.setObject(1, queueId);  // p_queue_id
            ps.setString(2, group);    // p_group
            ps.setInt(3, limit);       // p_limit
            List<Candidate> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Candidate(rs.getObject(1, UUID.class), rs.getString(2)));
                }
            }
            return out;
        }
    }

    public static List<ClaimedSegment> pop(Connection c, PopQuery q) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_pop_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, q.partitionId());          // p_partition_id
            ps.setString(2, q.group());                // p_group
            ps.setInt(3, q.batch());                   // p_batch
            ps.setInt(4, q.leaseSeconds());            // p_lease_seconds (0 = queue default)
            ps.setString(5, q.workerId());             // p_worker_id
            ps.setBoolean(6, q.autoAck());             // p_auto_ack
            ps.setString(7, q.subscriptionMode());     // p_sub_mode
            setInstant(ps, 8, q.subscriptionFrom());   // p_sub_from
            ps.setBoolean(9, q.conflate());            // p_conflate
            List<ClaimedSegment> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new ClaimedSegment(rs.getLong(1), rs.getInt(2), rs.getInt(3), rs.getInt(4),
                            rs.getTimestamp(5).toInstant(), rs.getBytes(6), rs.getInt(7)));
                }
            }
            return out;
        }
    }

    /** Locks the (partition, group) row for the rest of the transaction and resolves the hashes. */
    public static AckState resolveAck(Connection c, UUID partitionId, String group, byte[] hashes, UUID tenant,
                                      boolean leased) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_ack_resolve_v1(?, ?, ?, ?, ?)")) {
            ps.setObject(1, partitionId);  // p_partition_id
            ps.setString(2, group);        // p_group
            ps.setBytes(3, hashes);        // p_hashes
            ps.setObject(4, tenant);       // p_tenant
            ps.setBoolean(5, leased);      // p_bounded
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                boolean found = rs.getBoolean(1);
                boolean tenantOk = rs.getBoolean(2);
                if (!found || !tenantOk) {
                    return AckState.refused(found, tenantOk);
                }
                long be = rs.getLong(4);
                Long batchEnd = rs.wasNull() ? null : be;
                return new AckState(true, true,
                        new AckCursor(rs.getLong(3), rs.getLong(8), rs.getString(13), rs.getString(14)),
                        new AckLease(batchEnd, rs.getString(5), rs.getBoolean(6), rs.getBoolean(15), rs.getInt(7)),
                        new AckPolicy(rs.getInt(9), rs.getBoolean(10)),
                        new AckResolution(longs(rs.getArray(11)), bools(rs.getArray(12))));
            }
        }
    }

    /** queen.log_ack_completed_v1: an in-order ack of completed messages under a live lease, in one statement. */
    public static CompletedAck ackCompleted(Connection c, UUID partitionId, String group, byte[] hashes, UUID tenant,
                                            String leaseId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_ack_completed_v1(?, ?, ?, ?, ?)")) {
            ps.setObject(1, partitionId);  // p_partition_id
            ps.setString(2, group);        // p_group
            ps.setBytes(3, hashes);        // p_hashes
            ps.setObject(4, tenant);       // p_tenant
            ps.setString(5, leaseId);      // p_lease
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new CompletedAck(rs.getBoolean(1), rs.getBoolean(2), rs.getBoolean(3), rs.getString(4),
                        rs.getString(5));
            }
        }
    }

    public static void applyAck(Connection c, UUID partitionId, String group, long committed, boolean release,
                                int retry) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_ack_apply_v1(?, ?, ?, ?, ?)")) {
            ps.setObject(1, partitionId);  // p_partition_id
            ps.setString(2, group);        // p_group
            ps.setLong(3, committed);      // p_committed
            ps.setBoolean(4, release);     // p_release
            ps.setInt(5, retry);           // p_retry
            ps.execute();
        }
    }

    public static UUID fileDeadLetter(Connection c, UUID partitionId, String group, long offset, UUID messageId,
                                      String transactionId, String payloadJson, String error, int retryCount,
                                      boolean file) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_dlq_head_v1(?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)")) {
            ps.setObject(1, partitionId);     // p_partition_id
            ps.setString(2, group);           // p_group
            ps.setLong(3, offset);            // p_offset
            ps.setObject(4, messageId);       // p_message_id
            ps.setString(5, transactionId);   // p_transaction_id
            ps.setString(6, payloadJson);     // p_payload
            ps.setString(7, error);           // p_error
            ps.setInt(8, retryCount);         // p_retry_count
            ps.setBoolean(9, file);           // p_file
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getObject(1, UUID.class);
            }
        }
    }

    public record Renewal(int renewed, Instant expiresAt) {
    }

    public static Renewal renewLease(Connection c, String workerId, int seconds, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_renew_lease_v1(?, ?, ?)")) {
            ps.setString(1, workerId);  // p_worker_id
            ps.setInt(2, seconds);      // p_seconds
            ps.setObject(3, tenant);    // p_tenant
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Timestamp ts = rs.getTimestamp(2);
                return new Renewal(rs.getInt(1), ts == null ? null : ts.toInstant());
            }
        }
    }

    private static void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, java.time.OffsetDateTime.ofInstant(value, java.time.ZoneOffset.UTC));
        }
    }

    private static Long[] longs(Array a) throws SQLException {
        return a == null ? new Long[0] : (Long[]) a.getArray();
    }

    private static Boolean[] bools(Array a) throws SQLException {
        return a == null ? new Boolean[0] : (Boolean[]) a.getArray();
    }
}
