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

    /** Connection-class failures (08xxx) and server shutdown (57P0x): the database, not the request. */
    public static boolean isConnectionFailure(Throwable t) {
        String state = of(t);
        return state != null && (state.startsWith("08") || state.startsWith("57P"));
    }
}
