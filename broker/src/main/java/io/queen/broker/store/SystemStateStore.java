package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * JDBC of {@code queen.system_state} (schema.sql): the cluster-wide switches, one row per key with
 * the value {@code {"enabled": bool}}. Each method is one statement, one transaction in autocommit.
 */
public final class SystemStateStore {

    private SystemStateStore() {
    }

    /** The flags stored under the keys; a key without a row is absent from the map. */
    public static Map<String, Boolean> flags(Connection c, List<String> keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT key, COALESCE((value ->> 'enabled')::boolean, false) FROM queen.system_state WHERE key = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));   // key
            Map<String, Boolean> out = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getBoolean(2));
                }
            }
            return out;
        }
    }

    public static void setFlag(Connection c, String key, boolean enabled) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO queen.system_state (key, value, updated_at)"
                        + " VALUES (?, jsonb_build_object('enabled', ?::boolean), now())"
                        + " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()")) {
            ps.setString(1, key);          // key
            ps.setBoolean(2, enabled);     // value.enabled
            if (ps.executeUpdate() != 1) {
                throw new SQLException("queen.system_state upsert of " + key + " wrote no row");
            }
        }
    }
}
