package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * JDBC of the maintenance election: the three functions of 029_maintenance_leases and the session
 * advisory locks kept beside them as a belt. Each method is one autocommitted statement on the
 * caller's connection.
 */
public final class LeaseStore {
    private LeaseStore() {
    }

    /** Creates the task row if missing and sets its period; never touches the operator's kill switch. */
    public static void ensure(Connection c, String task, long periodMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.maintenance_ensure_v1(?, ?)")) {
            ps.setString(1, task);     // p_task
            ps.setLong(2, periodMs);   // p_period_ms
            ps.execute();
        }
    }

    /** The fence of a won claim, or null when the task is not due, disabled or leased by someone else. */
    public static Long claim(Connection c, String task, String holder, long leaseMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.maintenance_claim_v1(?, ?, ?)")) {
            ps.setString(1, task);     // p_task
            ps.setString(2, holder);   // p_holder
            ps.setLong(3, leaseMs);    // p_lease_ms
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long fence = rs.getLong(1);
                return rs.wasNull() ? null : fence;
            }
        }
    }

    /** False when the fence is stale: the lease expired mid-cycle and another replica claimed the task. */
    public static boolean release(Connection c, String task, long fence, int durationMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.maintenance_release_v1(?, ?, ?)")) {
            ps.setString(1, task);       // p_task
            ps.setLong(2, fence);        // p_fence
            ps.setInt(3, durationMs);    // p_duration_ms
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Session-level try-lock: held until {@link #advisoryUnlock} or the end of the session. */
    public static boolean tryAdvisoryLock(Connection c, long key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            ps.setLong(1, key);   // advisory key
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    public static boolean advisoryUnlock(Connection c, long key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
            ps.setLong(1, key);   // advisory key
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
