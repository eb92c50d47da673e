package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * JDBC of the queue management routes: one call of a procedure in 012_configure, 013_analytics or
 * 033_log_partitions_changed per method, every value bound. The procedures render the JSON
 * bodies; these methods hand their text back unparsed. Methods take the caller's connection; each
 * call is one statement, hence one transaction in autocommit.
 */
public final class QueueAdminStore {

    /** The tenant's KV and timer occupancy as the sweeper last measured it. */
    public record KvUsage(long kvRows, long kvBytes, long timerRows, long timerBytes) {
    }

    private QueueAdminStore() {
    }

    /** The configure echo, or {"error", "invalid"} when an option was refused (nothing written). */
    public static String configure(Connection c, UUID tenant, String queue, String optionsJson) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.configure_queue_v1(?, ?::jsonb, ?)::text")) {
            ps.setString(1, queue);        // p_queue_name
            ps.setString(2, optionsJson);  // p_options
            ps.setObject(3, tenant);       // p_tenant
            return single(ps);
        }
    }

    /** {"deleted": true, "queue", "existed"}. */
    public static String deleteQueue(Connection c, UUID tenant, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.delete_queue_v1(?, ?)::text")) {
            ps.setString(1, queue);   // p_queue_name
            ps.setObject(2, tenant);  // p_tenant
            return single(ps);
        }
    }

    /** The ids of the queue's partitions (none when the tenant has no such queue). */
    public static List<UUID> partitionIds(Connection c, UUID tenant, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.queue_partition_ids_v1(?, ?)")) {
            ps.setString(1, queue);   // p_queue_name
            ps.setObject(2, tenant);  // p_tenant
            List<UUID> ids = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getObject(1, UUID.class));
                }
            }
            return ids;
        }
    }

    public static String queueList(Connection c, UUID tenant, boolean live) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.queue_list_v1(?, ?)::text")) {
            ps.setObject(1, tenant);  // p_tenant
            ps.setBoolean(2, live);   // p_live
            return single(ps);
        }
    }

    /** Null when the tenant has no such queue. */
    public static String queueDetail(Connection c, UUID tenant, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.queue_detail_v1(?, ?)::text")) {
            ps.setString(1, queue);   // p_queue_name
            ps.setObject(2, tenant);  // p_tenant
            return single(ps);
        }
    }

    /** Null when the tenant has no such queue. */
    public static String queueDepth(Connection c, UUID tenant, String queue, String group) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.queue_depth_v1(?, ?, ?)::text")) {
            ps.setString(1, queue);   // p_queue_name
            ps.setString(2, group);   // p_group (NULL = worst cursor of the queue)
            ps.setObject(3, tenant);  // p_tenant
            return single(ps);
        }
    }

    public static String namespaces(Connection c, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.namespace_list_v1(?)::text")) {
            ps.setObject(1, tenant);  // p_tenant
            return single(ps);
        }
    }

    public static String tasks(Connection c, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.task_list_v1(?)::text")) {
            ps.setObject(1, tenant);  // p_tenant
            return single(ps);
        }
    }

    public static String overview(Connection c, UUID tenant, boolean cellWide) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.system_overview_v1(?, ?)::text")) {
            ps.setObject(1, tenant);      // p_tenant
            ps.setBoolean(2, cellWide);   // p_cell_wide: the default tenant reads the whole cell
            return single(ps);
        }
    }

    /** Zeros when the sweeper never measured the tenant. */
    public static KvUsage kvUsage(Connection c, UUID tenant) throws SQLException {
        String sql = "SELECT kv_rows, kv_bytes, timer_rows, timer_bytes FROM queen.kv_usage WHERE tenant_id = ?";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);  // tenant_id
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new KvUsage(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4))
                        : new KvUsage(0, 0, 0, 0);
            }
        }
    }

    /** One entry of a partition discovery call; {@code since} is parsed by PostgreSQL. */
    public record ChangedEntry(String queue, String since, String after, int limit) {
    }

    /**
     * The whole discovery answer. A {@code since} PostgreSQL cannot read fails with SQLSTATE
     * 22007 or 22008 (see {@link #isBadTimestamp}).
     */
    public static String partitionsChanged(Connection c, UUID tenant, List<ChangedEntry> entries, int guardSeconds,
                                           int floorSeconds) throws SQLException {
        String sql = "SELECT queen.log_partitions_changed_v1(?, ?::timestamptz[], ?, ?, ?, ?, ?)::text";
        int n = entries.size();
        String[] queues = new String[n];
        String[] since = new String[n];
        String[] after = new String[n];
        Integer[] limits = new Integer[n];
        for (int i = 0; i < n; i++) {
            ChangedEntry e = entries.get(i);
            queues[i] = e.queue();
            since[i] = e.since();
            after[i] = e.after();
            limits[i] = e.limit();
        }
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setArray(1, c.createArrayOf("text", queues));   // p_queues
            ps.setArray(2, c.createArrayOf("text", since));    // p_since (text, cast by PostgreSQL)
            ps.setArray(3, c.createArrayOf("text", after));    // p_after
            ps.setArray(4, c.createArrayOf("int4", limits));   // p_limits
            ps.setInt(5, guardSeconds);                        // p_guard_seconds
            ps.setInt(6, floorSeconds);                        // p_floor_seconds
            ps.setObject(7, tenant);                            // p_tenant
            return single(ps);
        }
    }

    /** A timestamp literal PostgreSQL rejected: the caller's input, not a broker fault. */
    public static boolean isBadTimestamp(SQLException e) {
        return SqlStates.isBadTimestamp(e);
    }

    private static String single(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
