package io.queen.broker.engine.spool;

import io.queen.broker.store.SqlStates;

import java.sql.SQLTransientException;

/**
 * Why a replayed push failed: a transient failure leaves its file in place for a later attempt, any
 * other is the database refusing the items for good.
 */
final class ReplayFailures {
    private ReplayFailures() {
    }

    /** Connection-class failures, pool timeouts, server shutdown, lock conflicts: the same push may succeed later. */
    static boolean isTransient(Throwable t) {
        for (Throwable cur = t; cur != null; cur = cur.getCause()) {
            if (cur instanceof SQLTransientException) {
                return true;
            }
        }
        if (SqlStates.of(t) == null) {
            return true; // No server verdict: the database was not reached.
        }
        return SqlStates.isRetryable(t);
    }
}
