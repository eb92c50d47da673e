package io.queen.broker.store;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * JDBC of the KV store (024_kv.sql): one call of {@code queen.kv_apply_v1}, {@code kv_list_v1} or
 * {@code kv_namespaces_v1} per method, every value bound, JSON in and out as text. Each is one
 * statement; on a connection in autocommit it is its own transaction, which is what makes a KV call
 * all or nothing.
 */
public final class KvStore {
    /** The stable identifiers the KV procedures raise as their message (kv_bad_namespace, ...). */
    private static final Pattern IDENTIFIER = Pattern.compile("kv_[a-z_]{1,60}");

    /** Limits of one call, passed to the procedure so it checks the broker's own numbers. */
    public record Limits(int maxOps, int maxKeys, int maxValueBytes, int prefixLimit, long maxReadBytes) {
    }

    /** What a KV procedure raised: its SQLSTATE, its identifier (null if it was not one of ours) and DETAIL. */
    public record Raised(String state, String identifier, String detail) {
    }

    private KvStore() {
    }

    /**
     * The answer array of {@code kv_apply_v1} as JSON text, index-aligned with {@code opsJson}.
     * {@code inWire}: the operations ride a transaction (the procedure then refuses getPrefix), and
     * the statement runs in the caller's open transaction.
     */
    public static String apply(Connection c, UUID tenant, String opsJson, Limits limits, boolean inWire)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.kv_apply_v1(?, ?::jsonb, ?, ?, ?, ?, ?, ?)::text")) {
            ps.setObject(1, tenant);                    // p_tenant
            ps.setString(2, opsJson);                   // p_ops
            ps.setInt(3, limits.maxOps());              // p_max_ops
            ps.setInt(4, limits.maxKeys());             // p_max_keys
            ps.setInt(5, limits.maxValueBytes());       // p_max_value_bytes
            ps.setInt(6, limits.prefixLimit());         // p_prefix_limit
            ps.setLong(7, limits.maxReadBytes());       // p_max_read_bytes
            ps.setBoolean(8, inWire);                   // p_in_wire
            return single(ps);
        }
    }

    /** {@code {deleted, done, backlog, backlogCapped}}: one bounded prune of expired rows over {@code shards}. */
    public static String expireStep(Connection c, int[] shards, int maxRows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.kv_expire_step_v1(?::smallint[], ?)::text")) {
            Integer[] boxed = new Integer[shards.length];
            for (int i = 0; i < shards.length; i++) {
                boxed[i] = shards[i];
            }
            ps.setArray(1, c.createArrayOf("int4", boxed));   // p_shards
            ps.setInt(2, maxRows);                              // p_max_rows
            return single(ps);
        }
    }

    /** {@code {skipped, tenants, computedAt}}: the usage rollup, unless one ran within {@code minIntervalMs}. */
    public static String usageStep(Connection c, int minIntervalMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.kv_usage_step_v1(?)::text")) {
            ps.setInt(1, minIntervalMs);                        // p_min_interval_ms
            return single(ps);
        }
    }

    /** Every tenant's limits and measured usage, nearest a limit first, as a JSON array's text. */
    public static String quotaRefresh(Connection c, int maxTenants) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.kv_quota_refresh_v1(?)::text")) {
            ps.setInt(1, maxTenants);                           // p_max_tenants
            return single(ps);
        }
    }

    /** {@code [{namespace, keys}]} of one tenant, as JSON text. */
    public static String namespaces(Connection c, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.kv_namespaces_v1(?)::text")) {
            ps.setObject(1, tenant);                    // p_tenant
            return single(ps);
        }
    }

    /** One console page {@code {rows, truncated, nextAfter, bytes}}, as JSON text. */
    public static String list(Connection c, UUID tenant, String namespace, String prefix, String after, Long limit,
                              boolean keysOnly, boolean includeExpired, int prefixLimit, long maxReadBytes)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.kv_list_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)::text")) {
            ps.setObject(1, tenant);                    // p_tenant
            ps.setString(2, namespace);                 // p_namespace
            ps.setString(3, prefix);                    // p_prefix
            ps.setString(4, after);                     // p_after
            if (limit == null) {                        // p_limit
                ps.setNull(5, java.sql.Types.INTEGER);
            } else {
                ps.setInt(5, (int) Math.clamp(limit, Integer.MIN_VALUE, Integer.MAX_VALUE));
            }
            ps.setBoolean(6, keysOnly);                 // p_keys_only
            ps.setBoolean(7, includeExpired);           // p_include_expired
            ps.setInt(8, prefixLimit);                  // p_prefix_limit
            ps.setLong(9, maxReadBytes);                // p_max_read_bytes
            return single(ps);
        }
    }

    /**
     * What the procedure raised, when {@code e} is an error the server sent (null otherwise). The
     * identifier is kept only when it is one of the procedure's own, never the server's prose.
     */
    public static Raised raised(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PSQLException p && p.getServerErrorMessage() != null) {
                ServerErrorMessage m = p.getServerErrorMessage();
                String message = m.getMessage();
                return new Raised(m.getSQLState(),
                        message != null && IDENTIFIER.matcher(message).matches() ? message : null, m.getDetail());
            }
        }
        return null;
    }

    private static String single(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("a KV procedure returned no row");
            }
            return rs.getString(1);
        }
    }
}
