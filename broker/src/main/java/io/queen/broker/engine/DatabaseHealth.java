package io.queen.broker.engine;

import io.queen.broker.store.Database;

import java.sql.SQLException;

/**
 * The database as the health, status and metrics routes see it: whether it answers a round trip,
 * where it is (for log lines), and how the connection pool stands.
 */
public final class DatabaseHealth {
    /** The pool's configured size and its connections now. */
    public record Pool(int size, int active, int idle, int waiting) {
    }

    private final Database database;

    public DatabaseHealth(Database database) {
        this.database = database;
    }

    /** One round trip; throws when the database does not answer. */
    public void ping() throws SQLException {
        database.ping();
    }

    /** {@link #ping()} as a yes or no. */
    public boolean answers() {
        try {
            database.ping();
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** {@code host:port} of the database, for log lines. */
    public String address() {
        return database.settings().host() + ":" + database.settings().port();
    }

    public Pool pool() {
        return new Pool(database.settings().poolSize(), database.activeConnections(), database.idleConnections(),
                database.waitingRequests());
    }
}
