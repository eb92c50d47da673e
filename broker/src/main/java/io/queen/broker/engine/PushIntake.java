package io.queen.broker.engine;

import io.queen.broker.store.SqlStates;

import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * Where the items of a push request are stored: in PostgreSQL, or in the on-disk {@link PushSpool}
 * while push maintenance is on or the database is unavailable. A push is never refused because the
 * database is down; it is refused (the route answers 5xx) only when the spool cannot be written.
 *
 * <p>A push that fails on a connection failure may have committed some of its partitions before the
 * connection broke. All its items are spooled anyway, with the message ids and transactionIds they
 * were pushed with ({@link PushService.Item}), so replaying one that did commit is a duplicate.
 */
public final class PushIntake {
    /** Which store took the items. */
    public enum Route { DATABASE, MAINTENANCE_SPOOL, OUTAGE_SPOOL }

    /** The per-item answers and the store they went to. */
    public record Outcome(Route route, List<PushService.Result> results) {
        /** False when the spool could not write the items durably (they are answered {@code failed}). */
        public boolean stored() {
            return route == Route.DATABASE || !PushSpool.anyFailed(results);
        }
    }

    private final PushService push;
    private final PushSpool spool;
    private final BooleanSupplier maintenance;

    public PushIntake(PushService push, PushSpool spool, BooleanSupplier maintenance) {
        this.push = push;
        this.spool = spool;
        this.maintenance = maintenance;
    }

    public Outcome push(UUID tenant, List<PushService.Item> items) throws SQLException {
        if (maintenance.getAsBoolean()) {
            return new Outcome(Route.MAINTENANCE_SPOOL, spool.buffer(tenant, items));
        }
        // Known down: spool at once rather than hold every request for the pool's connection timeout.
        if (spool.outageInProgress()) {
            return new Outcome(Route.OUTAGE_SPOOL, spool.buffer(tenant, items));
        }
        List<PushService.Result> queued;
        try {
            queued = push.push(tenant, items);
        } catch (SQLException | RuntimeException e) {
            if (!SqlStates.isUnavailable(e)) {
                throw e;
            }
            return new Outcome(Route.OUTAGE_SPOOL, spool.bufferDuringOutage(tenant, items, e));
        }
        spool.databaseReachable();
        return new Outcome(Route.DATABASE, queued);
    }
}
