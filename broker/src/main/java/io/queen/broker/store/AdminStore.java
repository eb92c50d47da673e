package io.queen.broker.store;

import java.sql.Array;
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
 * JDBC of the admin routes over the log engine: one call of a procedure in 010_log_admin per
 * method (plain SQL for the by-id dead-letter reads), every value bound. Methods take the caller's connection; each call is one statement,
 * hence one transaction in autocommit.
 */
public final class AdminStore {

    /** One dead letter as listed; {@code payload} is the stored JSON text (maybe an encryption envelope). */
    public record DeadLetter(UUID id, String transactionId, UUID partitionId, String queue, String partition,
                             String consumerGroup, String error, int retryCount, String payload, Instant failedAt) {
    }

    /** What a replay re-pushes: the newest dead letter at an address and where it came from. */
    public record ReplaySource(String queue, String partition, String payload) {
    }

    /** One dead-letter row addressed by its id, with where it was filed. */
    public record DeadLetterRow(UUID id, String queue, String partition, String consumerGroup, String transactionId,
                                String payload) {
    }

    private AdminStore() {
    }

    /** Names of the partitions seeked; empty when the queue is unknown to the tenant or has no partitions. */
    public static List<String> seekQueue(Connection c, UUID tenant, String group, String queue, boolean toEnd,
                                         Instant timestamp) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_seek_consumer_group_v1(?, ?, ?, ?, ?)")) {
            ps.setString(1, group);         // p_group
            ps.setString(2, queue);         // p_queue
            ps.setBoolean(3, toEnd);        // p_to_end
            setInstant(ps, 4, timestamp);   // p_timestamp (NULL with p_to_end)
            ps.setObject(5, tenant);        // p_tenant
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Array names = rs.getArray(1);
                return names == null ? List.of() : List.of((String[]) names.getArray());
            }
        }
    }

    /** False when the partition is unknown to the tenant. */
    public static boolean seekPartition(Connection c, UUID tenant, String group, String queue, String partition,
                                        boolean toEnd, Instant timestamp) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_seek_partition_v1(?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, group);         // p_group
            ps.setString(2, queue);         // p_queue
            ps.setString(3, partition);     // p_partition
            ps.setBoolean(4, toEnd);        // p_to_end
            setInstant(ps, 5, timestamp);   // p_timestamp (NULL with p_to_end)
            ps.setObject(6, tenant);        // p_tenant
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Metadata rows whose subscription timestamp was moved. */
    public static int updateSubscription(Connection c, UUID tenant, String group, Instant timestamp)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_update_subscription_v1(?, ?, ?)")) {
            ps.setString(1, group);         // p_group
            setInstant(ps, 2, timestamp);   // p_timestamp
            ps.setObject(3, tenant);        // p_tenant
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public static List<DeadLetter> deadLetters(Connection c, UUID tenant, String queue, String group, int limit,
                                               int offset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_dlq_list_v1(?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setString(2, queue);    // p_queue (NULL = every queue)
            ps.setString(3, group);    // p_group (NULL = every group)
            ps.setInt(4, limit);       // p_limit
            ps.setInt(5, offset);      // p_offset
            List<DeadLetter> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new DeadLetter(rs.getObject(1, UUID.class), rs.getString(2), rs.getObject(3, UUID.class),
                            rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7), rs.getInt(8),
                            rs.getString(9), rs.getObject(10, OffsetDateTime.class).toInstant()));
                }
            }
            return out;
        }
    }

    public static int purgeDeadLetters(Connection c, UUID tenant, String queue, String group) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_dlq_purge_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setString(2, queue);    // p_queue
            ps.setString(3, group);    // p_group (NULL = every group)
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public static int deleteDeadLetters(Connection c, UUID tenant, UUID partitionId, String transactionId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_dlq_delete_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setObject(2, partitionId);     // p_partition_id
            ps.setString(3, transactionId);   // p_transaction_id
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The newest dead letter at the address, or null. */
    public static ReplaySource replaySource(Connection c, UUID tenant, UUID partitionId, String transactionId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_dlq_replay_source_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setObject(2, partitionId);     // p_partition_id
            ps.setString(3, transactionId);   // p_transaction_id
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new ReplaySource(rs.getString(1), rs.getString(2), rs.getString(3)) : null;
            }
        }
    }

    /** The tenant's dead-letter row of that id, or null. Plain SQL: one join to resolve queue and tenant. */
    public static DeadLetterRow deadLetterById(Connection c, UUID tenant, UUID id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT d.id, q.name::text, p.name, d.consumer_group, d.transaction_id, d.payload::text"
                        + " FROM queen.log_dlq d"
                        + " JOIN queen.log_partitions p ON p.id = d.partition_id"
                        + " JOIN queen.queues q ON q.id = p.queue_id"
                        + " WHERE d.id = ? AND q.tenant_id = ?")) {
            ps.setObject(1, id);              // d.id
            ps.setObject(2, tenant);          // q.tenant_id
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new DeadLetterRow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                        rs.getString(4), rs.getString(5), rs.getString(6)) : null;
            }
        }
    }

    /** Removes the tenant's dead-letter row of that id only (other groups' rows of the message stay); 0 or 1. */
    public static int deleteDeadLetterById(Connection c, UUID tenant, UUID id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "DELETE FROM queen.log_dlq d USING queen.log_partitions p, queen.queues q"
                        + " WHERE d.id = ? AND p.id = d.partition_id AND q.id = p.queue_id AND q.tenant_id = ?")) {
            ps.setObject(1, id);              // d.id
            ps.setObject(2, tenant);          // q.tenant_id
            return ps.executeUpdate();
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
