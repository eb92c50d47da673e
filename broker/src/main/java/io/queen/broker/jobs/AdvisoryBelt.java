package io.queen.broker.jobs;

import io.queen.broker.store.Database;
import io.queen.broker.store.LeaseStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.logging.Logger;

/**
 * The session advisory locks the reference keeps beside the lease table (737001 retention, 737002
 * stats, 737003 retained bytes): a second, independent guarantee that two cycles of one task never
 * overlap, e.g. with a broker that schedules by lock only. The cycle runs on the connection that
 * holds the lock, and the lock is released before the connection goes back to the pool.
 */
final class AdvisoryBelt {
    static final long RETENTION = 737_001L;
    static final long STATS = 737_002L;
    static final long RETAINED_BYTES = 737_003L;

    private static final Logger LOG = Logger.getLogger(AdvisoryBelt.class.getName());

    @FunctionalInterface
    interface Body {
        Cycle.Outcome run(Connection c) throws SQLException;
    }

    private AdvisoryBelt() {
    }

    static Cycle.Outcome run(Database database, long key, String task, Body body) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (!LeaseStore.tryAdvisoryLock(c, key)) {
                return Cycle.Outcome.idle(task + ": advisory lock " + key + " is held by another session; skipped");
            }
            try {
                return body.run(c);
            } finally {
                try {
                    LeaseStore.advisoryUnlock(c, key);
                } catch (SQLException e) {
                    // The session is most likely broken; PostgreSQL drops its locks with it.
                    LOG.warning(() -> task + ": releasing advisory lock " + key + " failed: " + e.getMessage());
                }
            }
        }
    }
}
