package io.queen.broker.http;

import io.queen.broker.store.DatabaseUnavailableException;
import org.junit.jupiter.api.Test;

import java.io.EOFException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

class FailuresTest {
    private static SQLException state(String sqlState) {
        return new SQLException("ERROR: something internal", sqlState);
    }

    @Test
    void aDatabaseThatCannotBeReachedIsA503() {
        assertSame(Failures.UNAVAILABLE, Failures.classify(new SQLTransientConnectionException("pool timeout")));
        assertSame(Failures.UNAVAILABLE, Failures.classify(new DatabaseUnavailableException("down", null)));
        assertSame(Failures.UNAVAILABLE, Failures.classify(state("08006")));
        assertSame(Failures.UNAVAILABLE, Failures.classify(state("57P01")));
        assertSame(Failures.UNAVAILABLE, Failures.classify(state("53300")));
        assertSame(Failures.UNAVAILABLE, Failures.classify(new SQLException("I/O", null, new EOFException())));
        // Wrapped by a lambda or a future, the cause still decides.
        assertSame(Failures.UNAVAILABLE, Failures.classify(new RuntimeException(state("08003"))));
        assertEquals(503, Failures.UNAVAILABLE.status().code());
    }

    @Test
    void contentionIsARetryable503AndBadDataA400() {
        assertSame(Failures.BUSY, Failures.classify(state("40P01")));
        assertSame(Failures.BUSY, Failures.classify(state("40001")));
        assertSame(Failures.BUSY, Failures.classify(state("57014")));
        assertSame(Failures.INVALID_VALUE, Failures.classify(state("22021")));
        assertSame(Failures.INVALID_VALUE, Failures.classify(state("22001")));
        assertSame(Failures.CONFLICT, Failures.classify(state("23503")));
        assertFalse(Failures.INVALID_VALUE.retry());
    }

    @Test
    void anythingElseIsAnInternalErrorWithoutItsText() {
        assertSame(Failures.INTERNAL, Failures.classify(state("42P01")));
        assertSame(Failures.INTERNAL, Failures.classify(new IllegalStateException("bug")));
        assertEquals("internal error", Failures.INTERNAL.message());
    }
}
