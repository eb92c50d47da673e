package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HexFormat;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool's connections send each statement from one buffer of {@link Database#SEND_BUFFER_BYTES}
 * (a push's segment blob in one write). Binds smaller than, equal to and larger than that buffer,
 * after a header already in it, must all reach PostgreSQL intact.
 */
class SendBufferIT {
    private static DatabaseSettings db;

    @BeforeAll
    static void database() {
        db = TestPostgres.freshDatabase("send_buffer");
    }

    @Test
    void connectionsAskForTheLargerSendBuffer() {
        Properties p = Database.connectionProperties(db);
        assertEquals(Integer.toString(Database.SEND_BUFFER_BYTES), p.getProperty("maxSendBufferSize"));
        assertEquals(Integer.toString(Database.SEND_BUFFER_BYTES), p.getProperty("sendBufferSize"));
        assertTrue(Database.SEND_BUFFER_BYTES >= 64 * 1024, "a 100-message segment must fit");
    }

    @Test
    void bindsOfEverySizeAroundTheBufferArriveIntact() throws Exception {
        int b = Database.SEND_BUFFER_BYTES;
        int[] sizes = {0, 10, 55_000, b - 200, b - 1, b, b + 1, 2 * b - 100, 3 * b + 7};
        Random random = new Random(7);
        try (Database pool = Database.open(db); Connection c = pool.connection();
             PreparedStatement ps = c.prepareStatement("SELECT length(?::bytea), md5(?::bytea), ?::text")) {
            for (int size : sizes) {
                byte[] blob = new byte[size];
                random.nextBytes(blob);
                ps.setBytes(1, blob);
                ps.setBytes(2, blob);
                ps.setString(3, "after " + size); // a parameter behind the blob, as in a push's Bind
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(size, rs.getInt(1), "length of a " + size + "-byte bind");
                    assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(blob)),
                            rs.getString(2), "content of a " + size + "-byte bind");
                    assertEquals("after " + size, rs.getString(3));
                }
            }
        }
    }
}
