package io.queen.broker;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MainIT {

    @Test
    void migrateExitsOneWithoutOpeningAConnection() {
        // The address is unroutable: had migrate tried to connect, it would have hung or failed differently.
        long start = System.nanoTime();
        assertEquals(1, Main.run(new String[] {"migrate"}, new Env(Map.of("PG_HOST", "10.255.255.1"))));
        assertTrue(System.nanoTime() - start < 2_000_000_000L, "migrate returned at once");
    }

    @Test
    void applySchemaAppliesAndExitsZero() throws SQLException {
        DatabaseSettings db = TestPostgres.freshDatabase("apply_schema_cmd");
        int code = Main.run(new String[] {"apply-schema"}, new Env(Map.of(
                "PG_HOST", db.host(), "PG_PORT", String.valueOf(db.port()), "PG_USER", db.user(),
                "PG_PASSWORD", db.password(), "PG_DATABASE", db.database(), "DB_POOL_SIZE", "2")));
        assertEquals(0, code);
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT to_regclass('queen.log_segments') IS NOT NULL")) {
            rs.next();
            assertTrue(rs.getBoolean(1));
        }
    }

    @Test
    void aBadSettingStopsTheBootWithANonZeroCode() {
        assertEquals(2, Main.run(new String[0], new Env(Map.of("PORT", "not-a-port"))));
    }

    @Test
    void anUnknownCommandIsRefused() {
        assertEquals(2, Main.run(new String[] {"frobnicate"}, new Env(Map.of("PG_HOST", "127.0.0.1"))));
    }

    @Test
    void serveFailsWithExitOneWhenTheDatabaseIsUnreachable() {
        assertEquals(1, Main.run(new String[0], new Env(Map.of("PG_HOST", "127.0.0.1", "PG_PORT", "1", "PORT", "0"))));
    }
}
