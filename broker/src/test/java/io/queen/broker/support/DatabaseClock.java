package io.queen.broker.support;

import io.queen.broker.config.DatabaseSettings;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import static org.awaitility.Awaitility.await;

/**
 * Waits on PostgreSQL's clock instead of sleeping. It stamps segments and leases, and the
 * procedures compare those stamps with {@code now()}, the start of their own transaction; so once
 * {@code clock_timestamp()} is past an instant, every request sent afterwards sees it passed: a
 * lease expired, a segment older than a delay, a window or a seek boundary. A test that waits this
 * way waits exactly as long as the database needs, and never for the JVM's clock.
 */
public final class DatabaseClock {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private DatabaseClock() {
    }

    /**
     * Until {@code clock_timestamp()} is past the instant {@code instantSql} answers (one row, one
     * {@code timestamptz}; {@code params} bound in order). No row or a null keeps it waiting, up to
     * 30 s.
     */
    public static void awaitPast(DatabaseSettings db, String instantSql, Object... params) {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp() > (" + instantSql + ")")) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            await("the database clock passes " + instantSql).atMost(PATIENCE).pollInterval(Duration.ofMillis(25))
                    .until(() -> {
                        try (ResultSet rs = ps.executeQuery()) {
                            return rs.next() && rs.getBoolean(1);
                        }
                    });
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Until the newest segment of {@code queue} (default tenant) is older than {@code age}. */
    public static void awaitNewestSegmentOlderThan(DatabaseSettings db, String queue, Duration age) {
        awaitPast(db, "SELECT max(s.created_at) + make_interval(secs => ?) FROM queen.log_segments s"
                + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = ?", age.toNanos() / 1e9, queue);
    }

    /** Until every cursor leased under {@code leaseId} is past its lease's expiry. */
    public static void awaitLeaseExpired(DatabaseSettings db, String leaseId) {
        awaitPast(db, "SELECT max(lease_expires_at) FROM queen.log_consumers WHERE worker_id = ?", leaseId);
    }
}
