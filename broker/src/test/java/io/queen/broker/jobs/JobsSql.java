package io.queen.broker.jobs;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Test-side SQL and push helpers of the jobs tests: values bound, one connection per call. */
final class JobsSql {
    private JobsSql() {
    }

    static int exec(DatabaseSettings db, String sql, Object... args) {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** First column of every row. */
    static List<Object> column(DatabaseSettings db, String sql, Object... args) {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getObject(1));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Every column of the first row. */
    static List<Object> row(DatabaseSettings db, String sql, Object... args) {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                List<Object> out = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    out.add(rs.getObject(i));
                }
                return out;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static long number(DatabaseSettings db, String sql, Object... args) {
        Object v = column(db, sql, args).get(0);
        return v == null ? 0 : ((Number) v).longValue();
    }

    static UUID partitionId(DatabaseSettings db, String queue, String partition) {
        return (UUID) column(db, "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = ? AND p.name = ?", queue, partition).get(0);
    }

    /** One push request of {@code frames} messages to one partition: one segment. */
    static void push(HttpProbe http, String queue, String partition, int frames) {
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < frames; i++) {
            items.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(queue).append("\",\"partition\":\"")
                    .append(partition).append("\",\"payload\":{\"n\":").append(i).append("}}");
        }
        HttpProbe.Reply r = http.post("/api/v1/push", "{\"items\":[" + items + "]}");
        assertEquals(201, r.status(), r.body());
    }

    /**
     * Makes the partition's segments and hash rows look pushed {@code secondsAgo[i]} seconds ago,
     * oldest first (created_at must stay monotone in offset order), and repairs the watermarks.
     */
    static void age(DatabaseSettings db, UUID partition, String table, long... secondsAgo) {
        List<Object> bases = column(db, "SELECT base_offset FROM queen." + table
                + " WHERE partition_id = ? ORDER BY base_offset", partition);
        assertEquals(secondsAgo.length, bases.size(), table + " rows of " + partition);
        for (int i = 0; i < secondsAgo.length; i++) {
            exec(db, "UPDATE queen." + table + " SET created_at = now() - make_interval(secs => ?)"
                    + " WHERE partition_id = ? AND base_offset = ?", (double) secondsAgo[i], partition, bases.get(i));
        }
        exec(db, "UPDATE queen.log_partitions p SET"
                + " oldest_live_at = (SELECT min(created_at) FROM queen.log_segments s"
                + "   WHERE s.partition_id = p.id AND s.base_offset >= p.log_start),"
                + " oldest_txn_at = (SELECT min(created_at) FROM queen.log_txns t"
                + "   WHERE t.partition_id = p.id AND t.base_offset >= p.txns_start)"
                + " WHERE p.id = ?", partition);
    }

    static List<Long> segmentBases(DatabaseSettings db, UUID partition) {
        return column(db, "SELECT base_offset FROM queen.log_segments WHERE partition_id = ? ORDER BY base_offset",
                partition).stream().map(o -> ((Number) o).longValue()).toList();
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }
}
