package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/** JDBC of the tenant purge: one bounded step of {@code queen.delete_tenant_data_v1} (031_tenant_purge). */
public final class TenantPurgeStore {

    private TenantPurgeStore() {
    }

    /** The step's progress report as JSON text; the caller's transaction boundary is the step's commit. */
    public static String step(Connection c, UUID tenant, int maxQueues, int maxRows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.delete_tenant_data_v1(?, ?, ?, false)::text")) {
            ps.setObject(1, tenant);      // p_tenant
            ps.setInt(2, maxQueues);      // p_max_queues
            ps.setInt(3, maxRows);        // p_max_rows (per table)
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
