package io.queen.broker.store;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * JDBC of the streams routes (007-009, broker/DESIGN.md, Streams): one procedure call per method,
 * every value bound, on the caller's connection (the cycle's steps share the caller's transaction).
 */
public final class StreamStore {
    /** The identifiers the streams procedures raise as their message (streams_lease_invalid, ...). */
    private static final Pattern IDENTIFIER = Pattern.compile("streams_[a-z_]{1,60}");

    /** {@code outcome}: fresh, existing, reset, mismatch or denied (008); {@code detail} the refusal's text. */
    public record Registration(String outcome, UUID queryId, String detail) {
    }

    /** {@code status}: ok, partition_not_found or query_not_found; {@code rowsJson} a JSON array (009). */
    public record StateRows(String status, String rowsJson) {
    }

    /** Step 1 of a cycle (007): both ids the tenant's, and the source partition's names. */
    public record CycleSource(boolean queryFound, boolean partitionFound, String queueName, String partitionName) {
    }

    /** Step 3 of a cycle (007): what the ack did and how many state operations applied. */
    public record CycleClose(long ackCount, boolean leaseReleased, boolean more, int stateOpsApplied) {
    }

    /** What a streams procedure raised: its identifier (null when it was not one of ours) and DETAIL. */
    public record Raised(String identifier, String detail) {
    }

    private StreamStore() {
    }

    public static Registration register(Connection c, UUID tenant, String name, String sourceQueue, String sinkQueue,
                                        String configHash, boolean reset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT outcome, query_id, detail FROM queen.streams_register_query_v1(?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);        // p_tenant
            ps.setString(2, name);          // p_name
            ps.setString(3, sourceQueue);   // p_source_queue
            ps.setString(4, sinkQueue);     // p_sink_queue (NULL: none)
            ps.setString(5, configHash);    // p_config_hash
            ps.setBoolean(6, reset);        // p_reset
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("streams_register_query_v1 returned no row");
                }
                return new Registration(rs.getString(1), rs.getObject(2, UUID.class), rs.getString(3));
            }
        }
    }

    /**
     * @param keys             exact keys, empty for every key
     * @param keyPrefix        null for no prefix filter
     * @param ripeAtOrBefore   epoch ms, null for no ripeness filter
     */
    public static StateRows readState(Connection c, UUID tenant, UUID queryId, UUID partitionId, List<String> keys,
                                      String keyPrefix, BigDecimal ripeAtOrBefore) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT status, rows::text FROM queen.streams_state_get_v1(?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);                                       // p_tenant
            ps.setObject(2, queryId);                                      // p_query_id
            ps.setObject(3, partitionId);                                  // p_partition_id
            ps.setArray(4, c.createArrayOf("text", keys.toArray()));       // p_keys
            ps.setString(5, keyPrefix);                                    // p_key_prefix
            ps.setObject(6, ripeAtOrBefore, Types.NUMERIC);                // p_ripe_at_or_before
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("streams_state_get_v1 returned no row");
                }
                return new StateRows(rs.getString(1), rs.getString(2));
            }
        }
    }

    /** Takes the shard lock and checks ownership, inside the caller's transaction. */
    public static CycleSource openCycle(Connection c, UUID tenant, UUID queryId, UUID partitionId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT * FROM queen.log_streams_cycle_open_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);       // p_tenant
            ps.setObject(2, queryId);      // p_query_id
            ps.setObject(3, partitionId);  // p_partition_id
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("log_streams_cycle_open_v1 returned no row");
                }
                return new CycleSource(rs.getBoolean(1), rs.getBoolean(2), rs.getString(3), rs.getString(4));
            }
        }
    }

    /**
     * The ack (when {@code ack}) and the state operations, inside the caller's transaction. A refusal
     * is the SQLException the procedure raised; {@link #raised} reads which.
     *
     * @param stateOpsJson a JSON array of {type, key, value?}
     */
    public static CycleClose closeCycle(Connection c, UUID tenant, UUID queryId, UUID partitionId, String group,
                                        boolean ack, String leaseId, boolean ackOk, long ackCount,
                                        boolean releaseLease, String stateOpsJson, int maxKeyBytes)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT * FROM queen.log_streams_cycle_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setObject(2, queryId);         // p_query_id
            ps.setObject(3, partitionId);     // p_partition_id
            ps.setString(4, group);           // p_group
            ps.setBoolean(5, ack);            // p_ack
            ps.setString(6, leaseId);         // p_lease_id
            ps.setBoolean(7, ackOk);          // p_ack_ok
            ps.setLong(8, ackCount);          // p_ack_count
            ps.setBoolean(9, releaseLease);   // p_release_lease
            ps.setString(10, stateOpsJson);   // p_state_ops
            ps.setInt(11, maxKeyBytes);       // p_max_key_bytes
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("log_streams_cycle_v1 returned no row");
                }
                return new CycleClose(rs.getLong(1), rs.getBoolean(2), rs.getBoolean(3), rs.getInt(4));
            }
        }
    }

    /**
     * What the procedure raised, when {@code e} is an error the server sent with one of the streams
     * identifiers as its message; null for anything else (the database's own failures).
     */
    public static Raised raised(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PSQLException p && p.getServerErrorMessage() != null) {
                ServerErrorMessage m = p.getServerErrorMessage();
                String message = m.getMessage();
                return message != null && IDENTIFIER.matcher(message).matches()
                        ? new Raised(message, m.getDetail()) : null;
            }
        }
        return null;
    }
}
