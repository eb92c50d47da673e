package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * PG_USE_SSL decides whether the broker's connections are encrypted, whatever the server offers:
 * off is plain TCP even to a server with {@code ssl=on} (pgjdbc alone would "prefer" TLS), on is
 * TLS. The server's side of it is read from {@code pg_stat_ssl}, not from the driver's settings.
 */
class SslModeIT {
    private static DatabaseSettings db;

    @BeforeAll
    static void database() {
        db = TestPostgres.freshDatabase("ssl_mode");
    }

    @Test
    void withoutPgUseSslConnectionsArePlainEvenWhenTheServerOffersTls() throws Exception {
        assertEquals("disable", Database.connectionProperties(db).getProperty("sslmode"));
        try (Database pool = Database.open(db); Connection c = pool.connection()) {
            assertFalse(connectionIsEncrypted(c), "PG_USE_SSL=false must not negotiate TLS");
        }
    }

    @Test
    void withPgUseSslTheConnectionIsEncrypted() throws Exception {
        assumeTrue(serverOffersTls(), "the test server has ssl=off");
        DatabaseSettings tls = new DatabaseSettings(db.host(), db.port(), db.user(), db.password(), db.database(),
                true, false, db.poolSize(), db.statementTimeoutMs(), db.embedded(), db.embeddedDataDir());
        try (Database pool = Database.open(tls); Connection c = pool.connection()) {
            assertTrue(connectionIsEncrypted(c), "PG_USE_SSL=true must use TLS");
        }
    }

    private static boolean serverOffersTls() throws Exception {
        try (Connection c = TestPostgres.admin(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW ssl")) {
            return rs.next() && "on".equals(rs.getString(1));
        }
    }

    private static boolean connectionIsEncrypted(Connection c) throws Exception {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
            assertTrue(rs.next(), "pg_stat_ssl has a row for every backend");
            return rs.getBoolean(1);
        }
    }
}
