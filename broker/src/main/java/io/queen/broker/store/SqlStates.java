package io.queen.broker.store;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * Every PostgreSQL error the broker acts on, named once and classified by SQLSTATE rather than by
 * exception type or message text: which failures are the database's (worth a retry or a 503),
 * which are a row that vanished under a statement, and which are a value the database refused.
 */
public final class SqlStates {
    // Single states.
    public static final String SERIALIZATION_FAILURE = "40001";
    public static final String DEADLOCK_DETECTED = "40P01";
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    /** A statement timeout or a cancel; also what the broker reports when a waiting thread is interrupted. */
    public static final String QUERY_CANCELED = "57014";
    public static final String UNIQUE_VIOLATION = "23505";
    public static final String FOREIGN_KEY_VIOLATION = "23503";
    /** PL/pgSQL's NO_DATA_FOUND: the broker's procedures raise it when a partition row no longer exists. */
    public static final String NO_DATA_FOUND = "P0002";
    /** A CHECK failed; the KV procedure raises it for a lost {@code required} precondition (024_kv). */
    public static final String CHECK_VIOLATION = "23514";
    /** invalid_parameter_value: what the KV procedure raises for a malformed operation. */
    public static final String INVALID_PARAMETER_VALUE = "22023";
    /** string_data_right_truncation: what the KV procedure raises for a key or value over its ceiling. */
    public static final String STRING_DATA_RIGHT_TRUNCATION = "22001";
    public static final String INVALID_DATETIME_FORMAT = "22007";
    public static final String DATETIME_FIELD_OVERFLOW = "22008";

    // Classes (the first two characters) and the operator-intervention subclass.
    private static final String CONNECTION_EXCEPTION = "08";
    private static final String DATA_EXCEPTION = "22";
    private static final String SYNTAX_ERROR_OR_ACCESS_RULE = "42";
    private static final String INSUFFICIENT_RESOURCES = "53";
    private static final String OPERATOR_INTERVENTION = "57";
    private static final String SERVER_SHUTDOWN = "57P";
    private static final String SYSTEM_ERROR = "58";

    private SqlStates() {
    }

    /** The SQLSTATE of the first SQLException in the cause chain that has one, else null. */
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

    /** Connection-class failures (08) and server shutdown (57P): the database, not the request. */
    public static boolean isConnectionFailure(Throwable t) {
        String state = of(t);
        return state != null && (state.startsWith(CONNECTION_EXCEPTION) || state.startsWith(SERVER_SHUTDOWN));
    }

    /**
     * The database could not be reached or dropped the connection: no connection within the pool's
     * timeout, {@link DatabaseUnavailableException}, a connection failure or server shutdown, or a
     * server out of connections, disk or memory (53). Anything the server answered on a live
     * connection (a constraint, a bad value) is the request's problem instead.
     */
    public static boolean isUnavailable(Throwable t) {
        for (Throwable cur = t; cur != null; cur = cur.getCause()) {
            if (cur instanceof SQLTransientConnectionException || cur instanceof DatabaseUnavailableException) {
                return true;
            }
        }
        String state = of(t);
        return isConnectionFailure(t) || (state != null && state.startsWith(INSUFFICIENT_RESOURCES));
    }

    /** Lock conflicts, serialization failures and timeouts: the database was busy, not gone. */
    public static boolean isContention(Throwable t) {
        String state = of(t);
        return isLockConflict(t) || SERIALIZATION_FAILURE.equals(state) || QUERY_CANCELED.equals(state);
    }

    /**
     * The same statement may succeed later, unchanged: the database was unavailable or busy, hit an
     * operator intervention (57) or a system error (58).
     */
    public static boolean isRetryable(Throwable t) {
        String state = of(t);
        return isUnavailable(t) || isContention(t)
                || (state != null && (state.startsWith(OPERATOR_INTERVENTION) || state.startsWith(SYSTEM_ERROR)));
    }

    /** A row the statement needed was deleted under it: a foreign key to it, or a procedure's NO_DATA_FOUND. */
    public static boolean isRowGone(Throwable t) {
        String state = of(t);
        return FOREIGN_KEY_VIOLATION.equals(state) || NO_DATA_FOUND.equals(state);
    }

    /** A value PostgreSQL refused to store or parse (class 22): the caller's input. */
    public static boolean isDataException(Throwable t) {
        String state = of(t);
        return state != null && state.startsWith(DATA_EXCEPTION);
    }

    /**
     * Class 42, a missing or mismatched function, table or privilege: the schema the broker runs
     * against is not the one it ships (QUEEN_APPLY_SCHEMA=0 with an older schema), never the request.
     */
    public static boolean isSchemaMismatch(Throwable t) {
        String state = of(t);
        return state != null && state.startsWith(SYNTAX_ERROR_OR_ACCESS_RULE);
    }

    /** A timestamp literal PostgreSQL rejected. */
    public static boolean isBadTimestamp(Throwable t) {
        String state = of(t);
        return INVALID_DATETIME_FORMAT.equals(state) || DATETIME_FIELD_OVERFLOW.equals(state);
    }
}
