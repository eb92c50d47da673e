package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The settings every pool connection starts with ({@link Database#connectionProperties}): the
 * statement timeout, and no JIT, whose compile on every execution of a plpgsql generic plan cost a
 * dedup probe more than the probe itself.
 */
class ConnectionOptionsIT {
    @Test
    void poolConnectionsStartWithTheTimeoutAndWithoutJit() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("connection_options");
        try (Database pool = Database.open(db); Connection c = pool.connection();
             PreparedStatement ps = c.prepareStatement("SELECT current_setting('jit'), "
                     + "(SELECT setting FROM pg_settings WHERE name = 'statement_timeout')")) {
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                assertEquals("off", rs.getString(1));
                assertEquals(Long.toString(db.statementTimeoutMs()), rs.getString(2), "in ms");
            }
        }
    }
}
