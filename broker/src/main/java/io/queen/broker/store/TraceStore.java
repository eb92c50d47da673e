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
 * JDBC of the trace routes: one call of a procedure in 017_traces per method, every value bound,
 * every call scoped to one tenant. Trace data travels as JSON text both ways.
 */
public final class TraceStore {

    /** What a trace write records. */
    public record NewTrace(UUID partitionId, String transactionId, String consumerGroup, String eventType,
                           String dataJson, String workerId, List<String> names) {
    }

    /** One trace event of a message. */
    public record Trace(UUID id, String eventType, String dataJson, String consumerGroup, String workerId,
                        Instant createdAt, List<String> names) {
    }

    /** One trace event found by name, with the message and queue it belongs to. */
    public record NamedTrace(UUID id, String transactionId, UUID partitionId, String eventType, String dataJson,
                             String consumerGroup, String workerId, Instant createdAt, String queue,
                             String partition, List<String> names) {
    }

    public record TraceName(String name, long traceCount, long messageCount, Instant lastSeen) {
    }

    private TraceStore() {
    }

    /** The trace id, or null when the partition is not the tenant's (nothing is written). */
    public static UUID record(Connection c, UUID tenant, NewTrace t) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.trace_record_v1(?, ?, ?, ?, ?, ?::jsonb, ?, ?)")) {
            ps.setObject(1, tenant);                                                // p_tenant
            ps.setObject(2, t.partitionId());                                       // p_partition_id
            ps.setString(3, t.transactionId());                                     // p_transaction_id
            ps.setString(4, t.consumerGroup());                                     // p_group
            ps.setString(5, t.eventType());                                         // p_event_type
            ps.setString(6, t.dataJson());                                          // p_data
            ps.setString(7, t.workerId());                                          // p_worker_id
            ps.setArray(8, c.createArrayOf("text", t.names().toArray()));          // p_names
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getObject(1, UUID.class);
            }
        }
    }

    public static List<Trace> ofMessage(Connection c, UUID tenant, UUID partitionId, String transactionId)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.traces_of_message_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);          // p_tenant
            ps.setObject(2, partitionId);     // p_partition_id
            ps.setString(3, transactionId);   // p_transaction_id
            List<Trace> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Trace(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getString(5), instant(rs, 6), names(rs.getArray(7))));
                }
            }
            return out;
        }
    }

    public static List<NamedTrace> byName(Connection c, UUID tenant, String name, int limit, int offset)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.traces_by_name_v1(?, ?, ?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setString(2, name);     // p_name
            ps.setInt(3, limit);       // p_limit
            ps.setInt(4, offset);      // p_offset
            List<NamedTrace> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new NamedTrace(rs.getObject(1, UUID.class), rs.getString(2), rs.getObject(3, UUID.class),
                            rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7), instant(rs, 8),
                            rs.getString(9), rs.getString(10), names(rs.getArray(11))));
                }
            }
            return out;
        }
    }

    public static long countByName(Connection c, UUID tenant, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.traces_by_name_count_v1(?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setString(2, name);     // p_name
            return single(ps);
        }
    }

    public static List<TraceName> names(Connection c, UUID tenant, int limit, int offset) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.trace_names_v1(?, ?, ?)")) {
            ps.setObject(1, tenant);   // p_tenant
            ps.setInt(2, limit);       // p_limit
            ps.setInt(3, offset);      // p_offset
            List<TraceName> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new TraceName(rs.getString(1), rs.getLong(2), rs.getLong(3), instant(rs, 4)));
                }
            }
            return out;
        }
    }

    public static long countNames(Connection c, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.trace_names_count_v1(?)")) {
            ps.setObject(1, tenant);   // p_tenant
            return single(ps);
        }
    }

    private static long single(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static List<String> names(Array a) throws SQLException {
        return a == null ? List.of() : List.of((String[]) a.getArray());
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
