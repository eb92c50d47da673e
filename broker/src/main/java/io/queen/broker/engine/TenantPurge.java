package io.queen.broker.engine;

import io.queen.broker.store.Database;
import io.queen.broker.store.TenantPurgeStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * Wipes one tenant's data from the cell, one bounded step per call (broker/DESIGN.md, Tenancy). The
 * Kubernetes operator's Tenant finalizer calls until a step reports {@code done}; each step commits
 * on its own so no transaction holds the tenant's rows for the whole wipe. The default tenant is
 * never purged here: on a single-tenant broker it is the whole database.
 */
public final class TenantPurge {
    private static final Logger LOG = Logger.getLogger(TenantPurge.class.getName());
    public static final int DEFAULT_MAX_QUEUES = 10;
    public static final int DEFAULT_MAX_ROWS = 20_000;

    /** The default tenant was named; refused before the database is touched. */
    public static final class DefaultTenantRefusedException extends RuntimeException {
        DefaultTenantRefusedException() {
            super("refusing to purge the default tenant " + Tenants.DEFAULT
                    + " (it holds every pre-tenancy caller's data)");
        }
    }

    private final Database database;

    public TenantPurge(Database database) {
        this.database = database;
    }

    /** Runs one step and returns its progress report as JSON text. Budgets must be at least 1. */
    public String step(UUID tenant, int maxQueues, int maxRows) throws SQLException {
        if (Tenants.DEFAULT.equals(tenant)) {
            throw new DefaultTenantRefusedException();
        }
        if (maxQueues < 1 || maxRows < 1) {
            throw new IllegalArgumentException("purge budgets must be at least 1");
        }
        String report;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            report = TenantPurgeStore.step(c, tenant, maxQueues, maxRows);
        }
        LOG.info(() -> "tenant purge step for " + tenant + " (maxQueues " + maxQueues + ", maxRows " + maxRows
                + "): " + report);
        return report;
    }
}
