package io.queen.broker.jobs;

import io.queen.broker.store.Database;
import io.queen.broker.store.LeaseStore;

import java.sql.Connection;
import java.util.logging.Logger;

/**
 * The turn of a cluster-singleton task through its {@code queen.maintenance_leases} row: the
 * database clock decides when the task is due and exactly one replica's claim wins per period.
 * The lease outlives any sane cycle (twice the period, 60 s to 30 min), so a replica that dies
 * mid-cycle is replaced after it expires; the fence makes a late release of a stolen lease a no-op.
 * The row is ensured (with this broker's period) before the first claim, and again after a failure.
 */
final class LeaseTurn implements Turn {
    private static final Logger LOG = Logger.getLogger(LeaseTurn.class.getName());

    private final Database database;
    private final String task;
    private final long periodMs;
    private final String holder;
    private volatile boolean ensured;

    LeaseTurn(Database database, String task, long periodMs, String holder) {
        this.database = database;
        this.task = task;
        this.periodMs = periodMs;
        this.holder = holder;
    }

    static long leaseMs(long periodMs) {
        return Math.clamp(periodMs * 2, 60_000L, 1_800_000L);
    }

    /** How often a replica asks: a tenth of the period, between {@code floorMs} and one minute. */
    static long pollMs(long periodMs, long floorMs) {
        return Math.clamp(periodMs / 10, floorMs, 60_000L);
    }

    @Override
    public Long claim() throws Exception {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (!ensured) {
                LeaseStore.ensure(c, task, periodMs);
                ensured = true;
            }
            return LeaseStore.claim(c, task, holder, leaseMs(periodMs));
        } catch (Exception e) {
            ensured = false;
            throw e;
        }
    }

    @Override
    public void release(long fence, long elapsedMs) throws Exception {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            if (!LeaseStore.release(c, task, fence, (int) Math.min(elapsedMs, Integer.MAX_VALUE))) {
                LOG.warning(() -> "maintenance task " + task + ": lease (fence " + fence + ") was taken over"
                        + " while its cycle ran for " + elapsedMs + " ms; the cycle outlived its lease");
            }
        }
    }
}
