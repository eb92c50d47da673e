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
 * JDBC of message browsing: one call of a procedure in 016_messages per method, every value bound,
 * every call scoped to one tenant.
 */
public final class MessageStore {

    /** The listing's filters; null fields match anything. {@code from}/{@code to} null = the last hour. */
    public record Filter(String queue, String partition, String namespace, String task, String status,
                         Instant from, Instant to, int limit, int offset) {
    }

    /** One listed frame, addressed by (partition, segment base offset, frame index). */
    public record ListedFrame(UUID partitionId, String queue, String partition, String namespace, String task,
                              long baseOffset, int frameIdx, byte[] txnHash, Instant createdAt, String status,
                              int consumedBy, int totalGroups, Instant leaseExpiresAt) {
    }

    public record Mode(boolean hasQueueMode, int namedGroups) {
    }

    public record StoredSegment(long baseOffset, Instant createdAt, byte[] blob) {
    }

    /** The management detail of one frame; {@code error} and {@code dlqRetryCount} describe its dead letter. */
    public record Detail(String queue, String partition, String namespace, String task, int leaseTime,
                         int retryLimit, int retryDelay, int ttl, int priority, String status, String error,
                         int dlqRetryCount, boolean hasQueueMode, int namedGroups,
                         Instant queueModeLeaseExpiresAt) {
    }

    public record GroupPosition(String group, boolean consumed, Instant leaseExpiresAt) {
    }

    private MessageStore() {
    }

    public static List<ListedFrame> list(Connection c, UUID tenant, Filter f) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT * FROM queen.messages_list_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setString(2, f.queue());       // p_queue
            ps.setString(3, f.partition());   // p_partition
            ps.setString(4, f.namespace());   // p_namespace
            ps.setString(5, f.task());        // p_task
            ps.setString(6, f.status());      // p_status
            setInstant(ps, 7, f.from());      // p_from
            setInstant(ps, 8, f.to());        // p_to
            ps.setInt(9, f.limit());          // p_limit
            ps.setInt(10, f.offset());        // p_offset
            List<ListedFrame> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new ListedFrame(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getString(5), rs.getLong(6), rs.getInt(7), rs.getBytes(8),
                            instant(rs, 9), rs.getString(10), rs.getInt(11), rs.getInt(12), instant(rs, 13)));
                }
            }
            return out;
        }
    }

    public static Mode mode(Connection c, UUID tenant, String queue, String partition) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.messages_mode_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);      // p_tenant
            ps.setString(2, queue);       // p_queue
            ps.setString(3, partition);   // p_partition
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Mode(rs.getBoolean(1), rs.getInt(2));
            }
        }
    }

    /** The named segments of a partition of the tenant; missing ones (retention) are simply absent. */
    public static List<StoredSegment> segments(Connection c, UUID tenant, UUID partitionId, List<Long> baseOffsets)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.message_segments_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);                                              // p_tenant
            ps.setObject(2, partitionId);                                         // p_partition_id
            ps.setArray(3, c.createArrayOf("bigint", baseOffsets.toArray()));    // p_base_offsets
            return segmentRows(ps);
        }
    }

    /** The newest offset whose stored transaction hash is {@code hash}, or null. */
    public static Long locate(Connection c, UUID tenant, UUID partitionId, byte[] hash) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.message_locate_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setObject(2, partitionId);   // p_partition_id
            ps.setBytes(3, hash);           // p_hash
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long offset = rs.getLong(1);
                return rs.wasNull() ? null : offset;
            }
        }
    }

    /** The segment holding {@code offset}, or null when retention removed it. */
    public static StoredSegment covering(Connection c, UUID tenant, UUID partitionId, long offset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.message_segment_covering_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setObject(2, partitionId);   // p_partition_id
            ps.setLong(3, offset);          // p_offset
            List<StoredSegment> rows = segmentRows(ps);
            return rows.isEmpty() ? null : rows.get(0);
        }
    }

    /** @param before null = below the first offset whose hash row survives */
    public static List<StoredSegment> segmentsBefore(Connection c, UUID tenant, UUID partitionId, Long before,
                                                     int limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.message_segments_before_v1(?, ?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setObject(2, partitionId);     // p_partition_id
            if (before == null) {             // p_before
                ps.setNull(3, Types.BIGINT);
            } else {
                ps.setLong(3, before);
            }
            ps.setInt(4, limit);              // p_limit
            return segmentRows(ps);
        }
    }

    /** Null when the partition is not the tenant's. */
    public static Detail detail(Connection c, UUID tenant, UUID partitionId, long offset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.message_detail_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setObject(2, partitionId);   // p_partition_id
            ps.setLong(3, offset);          // p_offset
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Detail(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5),
                        rs.getInt(6), rs.getInt(7), rs.getInt(8), rs.getInt(9), rs.getString(10), rs.getString(11),
                        rs.getInt(12), rs.getBoolean(13), rs.getInt(14), instant(rs, 15));
            }
        }
    }

    public static List<GroupPosition> groups(Connection c, UUID tenant, UUID partitionId, long offset)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.message_groups_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setObject(2, partitionId);   // p_partition_id
            ps.setLong(3, offset);          // p_offset
            List<GroupPosition> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new GroupPosition(rs.getString(1), rs.getBoolean(2), instant(rs, 3)));
                }
            }
            return out;
        }
    }

    private static List<StoredSegment> segmentRows(PreparedStatement ps) throws SQLException {
        List<StoredSegment> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new StoredSegment(rs.getLong(1), instant(rs, 2), rs.getBytes(3)));
            }
        }
        return out;
    }

    private static void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
        }
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
