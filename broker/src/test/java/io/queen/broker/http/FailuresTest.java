package io.queen.broker.http;

import org.junit.jupiter.api.Test;

import java.io.EOFException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The answer of each failure kind; which SQLSTATE is which kind is FailureKindTest's. */
class FailuresTest {
    private static SQLException state(String sqlState) {
        return new SQLException("ERROR: something internal", sqlState);
    }

    @Test
    void aDatabaseThatCannotBeReachedIsARetryable503() {
        assertSame(Failures.UNAVAILABLE, Failures.classify(new SQLTransientConnectionException("pool timeout")));
        assertSame(Failures.UNAVAILABLE, Failures.classify(new SQLException("I/O", null, new EOFException())));
        assertSame(Failures.UNAVAILABLE, Failures.classify(new RuntimeException(state("08003"))));
        assertEquals(503, Failures.UNAVAILABLE.status().code());
        assertEquals("database_unavailable", Failures.UNAVAILABLE.code());
        assertTrue(Failures.UNAVAILABLE.retry());
    }

    @Test
    void contentionIsARetryable503AndBadDataA400() {
        assertSame(Failures.BUSY, Failures.classify(state("40P01")));
        assertEquals(503, Failures.BUSY.status().code());
        assertTrue(Failures.BUSY.retry());
        assertSame(Failures.INVALID_VALUE, Failures.classify(state("22021")));
        assertEquals(400, Failures.INVALID_VALUE.status().code());
        assertFalse(Failures.INVALID_VALUE.retry());
        assertSame(Failures.CONFLICT, Failures.classify(state("23503")));
        assertEquals(409, Failures.CONFLICT.status().code());
    }

    @Test
    void anythingElseIsAnInternalErrorWithoutItsText() {
        assertSame(Failures.INTERNAL, Failures.classify(state("42P01")));
        assertSame(Failures.INTERNAL, Failures.classify(new IllegalStateException("bug")));
        assertEquals(500, Failures.INTERNAL.status().code());
        assertEquals("internal error", Failures.INTERNAL.message());
    }
}
