package io.queen.broker.store;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * JDBC of the consumer-group management routes: one call of a procedure in 014_consumer_groups per
 * method, every value bound, every call scoped to one tenant.
 */
public final class ConsumerGroupStore {

    /** One (group, queue) with its lag; the subscription columns are null when the group never registered on the queue. */
    public record GroupOnQueue(String group, String queue, int cursors, int partitionsWithLag, long totalLag,
                               int maxTimeLagSeconds, long maxTotalConsumed, String subscriptionMode,
                               Instant subscriptionTimestamp, Instant subscriptionCreatedAt, boolean conflation) {
    }

    /** One cursor whose oldest unconsumed segment is older than the threshold. */
    public record LaggingCursor(String group, String queue, String partition, UUID partitionId, String workerId,
                                long offsetLag, int timeLagSeconds, Instant oldestUnconsumedAt) {
    }

    /** One cursor of a group, with the group's conflation policy on its queue. */
    public record GroupCursor(String queue, boolean conflation, String partition, String workerId,
                              long totalConsumed, long offsetLag, int timeLagSeconds, boolean leaseActive) {
    }

    /** What a group delete removed: cursors, the queues touched, and the queues whose cursors went. */
    public record Deletion(int deletedPartitions, List<UUID> queueIds, List<String> repairedQueues) {
    }

    private ConsumerGroupStore() {
    }

    public static List<GroupOnQueue> groups(Connection c, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.consumer_groups_list_v1(?)")) {
            ps.setObject(1, tenant);   // p_tenant
            List<GroupOnQueue> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new GroupOnQueue(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getInt(4),
                            rs.getLong(5), rs.getInt(6), rs.getLong(7), rs.getString(8), instant(rs, 9),
                            instant(rs, 10), rs.getBoolean(11)));
                }
            }
            return out;
        }
    }

    public static List<LaggingCursor> lagging(Connection c, UUID tenant, int minLagSeconds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.consumer_groups_lagging_v1(?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setInt(2, minLagSeconds);    // p_min_lag_seconds
            List<LaggingCursor> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new LaggingCursor(rs.getString(1), rs.getString(2), rs.getString(3),
                            rs.getObject(4, UUID.class), rs.getString(5), rs.getLong(6), rs.getInt(7),
                            instant(rs, 8)));
                }
            }
            return out;
        }
    }

    /** The group's cursors ordered by queue, then partition. */
    public static List<GroupCursor> cursors(Connection c, UUID tenant, String group) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.consumer_group_detail_v1(?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setString(2, group);    // p_group
            List<GroupCursor> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new GroupCursor(rs.getString(1), rs.getBoolean(2), rs.getString(3), rs.getString(4),
                            rs.getLong(5), rs.getLong(6), rs.getInt(7), rs.getBoolean(8)));
                }
            }
            return out;
        }
    }

    /** @param queue null = every queue of the tenant */
    public static Deletion delete(Connection c, UUID tenant, String group, String queue, boolean deleteMetadata)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.consumer_group_delete_v1(?, ?, ?, ?)")) {
            ps.setObject(1, tenant);            // p_tenant
            ps.setString(2, group);             // p_group
            ps.setString(3, queue);             // p_queue (NULL = every queue)
            ps.setBoolean(4, deleteMetadata);   // p_delete_metadata
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Deletion(rs.getInt(1), List.of(array(rs.getArray(2), UUID[].class)),
                        List.of(array(rs.getArray(3), String[].class)));
            }
        }
    }

    private static <T> T[] array(Array a, Class<T[]> type) throws SQLException {
        return type.cast(a.getArray());
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
