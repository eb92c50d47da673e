package io.queen.bench;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The KV mode's ceiling: the same puts and gets straight over JDBC, one statement per call in
 * autocommit as the broker's {@code kv_apply_v1} is one statement, on a scratch copy of the KV
 * table's shape (columns, primary key, generated shard, the expiry index, fillfactor) in the same
 * database. No HTTP, no JSON parsing or validation, no procedure: the most PostgreSQL gives for
 * these rows. Rows are written in key order, the broker's lock order.
 */
final class KvCeiling {
    static final String TABLE = "bench_kv_ceiling";
    private static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";

    private KvCeiling() {
    }

    /** A fresh scratch table and its version sequence. */
    static void createTable(PgServer.Database db) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            st.execute("DROP SEQUENCE IF EXISTS " + TABLE + "_seq");
            st.execute("CREATE TABLE " + TABLE + " (LIKE queen.kv INCLUDING ALL)");
            st.execute("ALTER TABLE " + TABLE + " SET (fillfactor = 70)");
            st.execute("CREATE SEQUENCE " + TABLE + "_seq AS bigint CACHE 1000");
        }
    }

    /** One JDBC client: its own connection, autocommit. */
    static final class Client implements AutoCloseable {
        private final Connection connection;
        private final PreparedStatement upsert;
        private final PreparedStatement select;

        Client(PgServer.Database db) throws SQLException {
            connection = db.connect();
            upsert = connection.prepareStatement("INSERT INTO " + TABLE + " AS t (tenant_id, namespace, key, value, "
                    + "version, expires_at) SELECT '" + DEFAULT_TENANT + "', '" + KvRequests.NAMESPACE + "', u.k, "
                    + "u.v::jsonb, nextval('" + TABLE + "_seq'), NULL FROM unnest(?::text[], ?::text[]) AS u(k, v) "
                    + "ORDER BY u.k COLLATE \"C\" ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET "
                    + "value = EXCLUDED.value, version = EXCLUDED.version, expires_at = EXCLUDED.expires_at, "
                    + "updated_at = now()");
            select = connection.prepareStatement("SELECT key, value, version, expires_at, updated_at FROM " + TABLE
                    + " WHERE tenant_id = '" + DEFAULT_TENANT + "' AND namespace = '" + KvRequests.NAMESPACE
                    + "' AND key = ANY(?::text[]) AND (expires_at IS NULL OR expires_at > now())");
        }

        /** Upserts {@code keys} with the value of {@code seq}; returns the rows written. */
        int put(List<String> keys, long seq) throws SQLException {
            String[] values = new String[keys.size()];
            java.util.Arrays.fill(values, KvRequests.value(seq));
            Array k = connection.createArrayOf("text", keys.toArray());
            Array v = connection.createArrayOf("text", values);
            upsert.setArray(1, k);
            upsert.setArray(2, v);
            return upsert.executeUpdate();
        }

        /** Reads {@code keys}; returns the rows found. */
        int get(List<String> keys) throws SQLException {
            select.setArray(1, connection.createArrayOf("text", keys.toArray()));
            int found = 0;
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    rs.getString(2); // the value, as the broker reads and renders it
                    found++;
                }
            }
            return found;
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }
}
