package io.queen.bench;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * An immediate pop ({@code wait=false}) on the measured queue once it is drained and idle: the
 * pop scans the queue's partitions for pending ones before it may answer 204. Idleness is made,
 * not waited for: every partition's last write is moved ten minutes back and the table vacuumed
 * and analyzed, as ten quiet minutes would leave it. Timed twice, each the mean of
 * {@value #POPS} pops on one connection:
 * <ul>
 *   <li>without an empty-scan watermark, re-check held off (the scan reads every partition; how
 *       every such pop went before the watermark existed);</li>
 *   <li>after an empty scan moved the watermark (the scan reads partitions written since).</li>
 * </ul>
 */
final class IdlePopPhase {
    static final int POPS = 200;

    record Outcome(double fullScanMs, double watermarkMs) {
    }

    private IdlePopPhase() {
    }

    static Outcome run(PgServer.Database db, BrokerHttp http, String queue, int batch)
            throws SQLException, IOException {
        try (Connection c = db.connect()) {
            exec(c, "UPDATE queen.log_partitions SET last_write_at = now() - interval '10 minutes'"
                    + " WHERE queue_id = (SELECT id FROM queen.queues WHERE name = ?)", queue);
            // What autovacuum does in those ten minutes (its thresholds for this table are a few
            // hundred rows): without it the planner still sees every partition as just written.
            try (Statement st = c.createStatement()) {
                st.execute("VACUUM ANALYZE queen.log_partitions");
            }
            // Watermark at the epoch, last re-checked in the future: every pop scans everything.
            exec(c, "INSERT INTO queen.consumer_watermarks (queue_id, consumer_group, last_empty_scan_at, updated_at)"
                    + " SELECT id, '__QUEUE_MODE__', 'epoch', now() + interval '1 day' FROM queen.queues WHERE name = ?"
                    + " ON CONFLICT (queue_id, consumer_group) DO UPDATE"
                    + " SET last_empty_scan_at = 'epoch', updated_at = EXCLUDED.updated_at", queue);
            double full = meanMs(http, queue, batch);
            // Let the next empty scan re-check and move the watermark.
            exec(c, "DELETE FROM queen.consumer_watermarks"
                    + " WHERE queue_id = (SELECT id FROM queen.queues WHERE name = ?)", queue);
            if (!http.popFindsNothing(queue, batch)) {
                throw new IOException("queue " + queue + " still delivers after the drain");
            }
            double narrowed = meanMs(http, queue, batch);
            return new Outcome(full, narrowed);
        }
    }

    private static double meanMs(BrokerHttp http, String queue, int batch) throws IOException {
        long start = System.nanoTime();
        for (int i = 0; i < POPS; i++) {
            if (!http.popFindsNothing(queue, batch)) {
                throw new IOException("queue " + queue + " delivered a message while idle");
            }
        }
        return (System.nanoTime() - start) / 1e6 / POPS;
    }

    private static void exec(Connection c, String sql, String queue) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, queue);
            ps.executeUpdate();
        }
    }
}
