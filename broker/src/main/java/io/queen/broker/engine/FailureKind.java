package io.queen.broker.engine;

import io.queen.broker.store.SqlStates;

import java.io.IOException;
import java.sql.SQLException;

/**
 * What a failure that is not the client's mistake is, in terms a caller can act on
 * (broker/DESIGN.md, Error answers). The SQLSTATEs behind each kind are named in
 * {@link SqlStates}; callers above the engine see only the kind.
 */
public enum FailureKind {
    /** The database cannot be reached, dropped the connection or is out of connections. */
    UNAVAILABLE,
    /** Lock timeouts, deadlocks, serialization failures and statement timeouts. */
    BUSY,
    /** A value PostgreSQL refused to store or parse: the client's value, not the broker. */
    INVALID_VALUE,
    /** A foreign key broken by a concurrent delete. */
    CONFLICT,
    /** Anything else. */
    INTERNAL;

    public static FailureKind of(Throwable failure) {
        if (SqlStates.isUnavailable(failure)) {
            return UNAVAILABLE;
        }
        String state = SqlStates.of(failure);
        if (state == null) {
            return hasConnectionIoFailure(failure) ? UNAVAILABLE : INTERNAL;
        }
        if (SqlStates.isContention(failure)) {
            return BUSY;
        }
        if (SqlStates.isDataException(failure)) {
            return INVALID_VALUE;
        }
        if (SqlStates.FOREIGN_KEY_VIOLATION.equals(state)) {
            return CONFLICT;
        }
        return INTERNAL;
    }

    /** pgjdbc reports an I/O failure of the connection as an SQLException without a SQLSTATE. */
    private static boolean hasConnectionIoFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() == null && sql.getCause() instanceof IOException) {
                return true;
            }
        }
        return false;
    }
}
