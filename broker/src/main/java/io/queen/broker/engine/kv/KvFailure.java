package io.queen.broker.engine.kv;

import io.queen.broker.engine.FailureKind;
import io.queen.broker.store.SqlStates;

/**
 * What a failure of a KV call that is not the client's mistake is (broker/DESIGN.md, KV store),
 * from its SQLSTATE, in the reference broker's classes: the database lost, out of connections or
 * shutting down, and any state a retry can cure (classes 57 and 58 too), is unavailable; lock
 * timeouts, deadlocks, serialization failures and statement timeouts are busy; a value PostgreSQL
 * cannot store is the client's value; class 42 is a schema that is not this broker's (the
 * procedures missing, as with QUEEN_APPLY_SCHEMA=0 over an older schema); the rest is internal.
 */
public enum KvFailure {
    UNAVAILABLE,
    BUSY,
    INVALID_VALUE,
    MISCONFIGURED,
    INTERNAL;

    public static KvFailure of(Throwable failure) {
        FailureKind kind = FailureKind.of(failure);
        if (kind == FailureKind.BUSY) {
            return BUSY;
        }
        if (kind == FailureKind.UNAVAILABLE || SqlStates.isRetryable(failure)) {
            return UNAVAILABLE;
        }
        if (kind == FailureKind.INVALID_VALUE) {
            return INVALID_VALUE;
        }
        if (SqlStates.isSchemaMismatch(failure)) {
            return MISCONFIGURED;
        }
        return INTERNAL;
    }
}
