package io.queen.broker.engine;

import io.queen.broker.store.DatabaseUnavailableException;
import org.junit.jupiter.api.Test;

import java.io.EOFException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FailureKindTest {
    private static SQLException state(String sqlState) {
        return new SQLException("ERROR: something internal", sqlState);
    }

    @Test
    void aDatabaseThatCannotBeReachedIsUnavailable() {
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(new SQLTransientConnectionException("pool timeout")));
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(new DatabaseUnavailableException("down", null)));
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(state("08006")));
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(state("57P01")));
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(state("53300")));
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(new SQLException("I/O", null, new EOFException())));
        // Wrapped by a lambda or a future, the cause still decides.
        assertEquals(FailureKind.UNAVAILABLE, FailureKind.of(new RuntimeException(state("08003"))));
    }

    @Test
    void contentionIsBusyAndBadDataAnInvalidValue() {
        assertEquals(FailureKind.BUSY, FailureKind.of(state("40P01")));
        assertEquals(FailureKind.BUSY, FailureKind.of(state("40001")));
        assertEquals(FailureKind.BUSY, FailureKind.of(state("57014")));
        assertEquals(FailureKind.INVALID_VALUE, FailureKind.of(state("22021")));
        assertEquals(FailureKind.INVALID_VALUE, FailureKind.of(state("22001")));
        assertEquals(FailureKind.CONFLICT, FailureKind.of(state("23503")));
    }

    @Test
    void anythingElseIsInternal() {
        assertEquals(FailureKind.INTERNAL, FailureKind.of(state("42P01")));
        assertEquals(FailureKind.INTERNAL, FailureKind.of(new IllegalStateException("bug")));
        assertEquals(FailureKind.INTERNAL, FailureKind.of(new SQLException("no state, no I/O")));
    }
}
