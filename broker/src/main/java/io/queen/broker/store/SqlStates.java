package io.queen.broker.store;

import java.sql.SQLException;

/** PostgreSQL error classes the broker acts on, classified by SQLSTATE rather than exception type. */
public final class SqlStates {
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    public static final String DEADLOCK_DETECTED = "40P01";
    public static final String SERIALIZATION_FAILURE = "40001";
    public static final String UNIQUE_VIOLATION = "23505";
    public static final String QUERY_CANCELED = "57014";

    private SqlStates() {
    }

    public static String of(Throwable t) {
        for (Throwable cur = t; cur != null; cur = cur.getCause()) {
            if (cur instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }

    /** Lock timeouts and deadlocks: the statement can succeed if tried again later. */
    public static boolean isLockConflict(Throwable t) {
        String state = of(t);
        return LOCK_NOT_AVAILABLE.equals(state) || DEADLOCK_DETECTED.equals(state);
    }

    /**
     * The database could not be reached or dropped the connection: no connection within the pool's
     * timeout, {@link DatabaseUnavailableException}, a connection-class SQLSTATE (08xxx), a server
     * shutdown (57P0x) or a server out of connections, disk or memory (53xxx). Anything the server
     * answered on a live connection (a constraint, a bad value) is the request's problem instead.
     */
    public static boolean isUnavailable(Throwable t) {
        for (Throwable cur = t; cur != null; cur = cur.getCause()) {
            if (cur instanceof java.sql.SQLTransientConnectionException || cur instanceof DatabaseUnavailableException) {
                return true;
            }
        }
        String state = of(t);
        return isConnectionFailure(t) || (state != null && state.startsWith("53"));
    }

    /** Connection-class failures (08xxx) and server shutdown (57P0x): the database, not the request. */
    public static boolean isConnectionFailure(Throwable t) {
        String state = of(t);
        return state != null && (state.startsWith("08") || state.startsWith("57P"));
    }
}
