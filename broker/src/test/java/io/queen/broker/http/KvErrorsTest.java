package io.queen.broker.http;

import io.queen.broker.store.DatabaseUnavailableException;
import org.junit.jupiter.api.Test;

import java.io.EOFException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The KV routes' answers to failures that are not the client's: never the database's text. */
class KvErrorsTest {
    private static SQLException state(String sqlState) {
        return new SQLException("ERROR: relation \"queen.kv\" ... internal", sqlState);
    }

    @Test
    void aLostOrBusyDatabaseIsA503KvUnavailableWithRetry() {
        for (Throwable lost : new Throwable[] {new SQLTransientConnectionException("pool timeout"),
                new DatabaseUnavailableException("down", null), state("08006"), state("53300"), state("57P01"),
                state("58030"), new SQLException("I/O", null, new EOFException()), new RuntimeException(state("08003"))}) {
            assertSame(KvErrors.UNAVAILABLE, KvErrors.classify(lost), lost.toString());
        }
        for (String busy : new String[] {"40001", "40P01", "55P03", "57014"}) {
            assertSame(KvErrors.BUSY, KvErrors.classify(state(busy)), busy);
        }
        assertEquals(503, KvErrors.UNAVAILABLE.status().code());
        assertEquals("kv_unavailable", KvErrors.BUSY.error());
        assertTrue(KvErrors.UNAVAILABLE.retry() && KvErrors.BUSY.retry());
    }

    @Test
    void storageRefusalsSchemaMismatchesAndTheRest() {
        assertSame(KvErrors.INVALID_VALUE, KvErrors.classify(state("22P05")));
        assertEquals(400, KvErrors.INVALID_VALUE.status().code());
        assertSame(KvErrors.MISCONFIGURED, KvErrors.classify(state("42883")));
        assertSame(KvErrors.INTERNAL, KvErrors.classify(state("XX000")));
        assertSame(KvErrors.INTERNAL, KvErrors.classify(new IllegalStateException("bug")));
        assertFalse(KvErrors.INTERNAL.detail().contains("queen.kv"));
        assertEquals("kv_error", KvErrors.INTERNAL.error());
    }
}
