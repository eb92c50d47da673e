package io.queen.broker.store;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The push dedup probe, the ack resolver and the one-statement ack run inside plpgsql, whose cached plans become generic
 * (planned without the parameter values). A range open on one side then looks like a third of the
 * table to the planner, and a generic plan read all of queen.log_txns, every partition's rows, on
 * every push. These tests force generic plans over a table holding thousands of other rows and
 * count the sequential scans the hot-path functions make on it: there must be none.
 */
class HotPathPlansIT {
    private static final int SEGMENTS_PER_PARTITION = 1500;
    private static final int FRAMES = 100;

    @Test
    void theDedupProbeAndTheAckResolverReadOnlyTheirPartitionsRangesUnderGenericPlans() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("hot_path_plans");
        try (Broker broker = BrokerFixture.start(db, Map.of()); Connection c = TestPostgres.connect(db)) {
            HttpProbe http = new HttpProbe(broker.port());
            for (String p : List.of("busy", "target")) {
                assertEquals(201, http.post("/api/v1/push", "{\"items\":[{\"queue\":\"plans\",\"partition\":\"" + p
                        + "\",\"payload\":{\"n\":0},\"transactionId\":\"seed-" + p + "\"}]}").status());
            }
            UUID busy = partitionId(c, "busy");
            UUID target = partitionId(c, "target");
            // Thousands of hash rows, most of them in another partition: a scan of the table would read them all.
            fill(c, busy, "busy", SEGMENTS_PER_PARTITION);
            fill(c, target, "target", 20);
            try (Statement st = c.createStatement()) {
                st.execute("ANALYZE queen.log_txns");
            }
            // The first broker message's pop takes the lease the ack below resolves inside.
            assertEquals(200, http.get("/api/v1/pop/queue/plans/partition/target?batch=1").status());

            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("SET LOCAL plan_cache_mode = force_generic_plan");
                st.execute("SET LOCAL max_parallel_workers_per_gather = 0");
            }
            long lastBase = lastBase(c, target);
            for (int i = 0; i < 10; i++) {
                // Everything already written is vouched for, as the broker's dedup cache does.
                String verdict = push(c, target, "fresh-" + i, 0L, lastBase);
                assertTrue(verdict.contains("\"queued\""), verdict);
                lastBase = lastBase(c, target);
            }
            // Nothing vouched for: the probe must still find the stored original.
            String dup = push(c, target, "target-7", null, null);
            assertTrue(dup.contains("\"duplicate\""), dup);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT span_offsets FROM queen.log_ack_resolve_v1(?, ?, ?, ?, true)")) {
                ps.setObject(1, target);
                ps.setString(2, Tenants.QUEUE_MODE);
                ps.setBytes(3, TxnHash.of("seed-target"));
                ps.setObject(4, Tenants.DEFAULT);
                for (int i = 0; i < 10; i++) {
                    try (ResultSet rs = ps.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals(0L, ((Long[]) rs.getArray(1).getArray())[0], "the seed message is offset 0");
                    }
                }
            }
            // Out of delivery order the in-order fast path does not apply and the hash join runs.
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT span_offsets FROM queen.log_ack_resolve_v1(?, ?, ?, ?, false)")) {
                ps.setObject(1, target);
                ps.setString(2, Tenants.QUEUE_MODE);
                ps.setBytes(3, TxnHash.concat(List.of("target-2", "target-1")));
                ps.setObject(4, Tenants.DEFAULT);
                for (int i = 0; i < 10; i++) {
                    try (ResultSet rs = ps.executeQuery()) {
                        assertTrue(rs.next());
                        assertEquals(List.of(2L, 1L), List.of((Long[]) rs.getArray(1).getArray()));
                    }
                }
            }
            // The one-statement ack of the pop's lease resolves the same way and writes.
            try (PreparedStatement ps = c.prepareStatement("SELECT applied FROM queen.log_ack_completed_v1(?, ?, ?, ?, "
                    + "(SELECT worker_id FROM queen.log_consumers WHERE partition_id = ? AND consumer_group = ?))")) {
                ps.setObject(1, target);
                ps.setString(2, Tenants.QUEUE_MODE);
                ps.setBytes(3, TxnHash.of("seed-target"));
                ps.setObject(4, Tenants.DEFAULT);
                ps.setObject(5, target);
                ps.setString(6, Tenants.QUEUE_MODE);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertTrue(rs.getBoolean(1), "the in-order ack under the pop's lease is applied");
                }
            }
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables "
                         + "WHERE schemaname = 'queen' AND relname = 'log_txns'")) {
                assertTrue(rs.next());
                assertEquals(0, rs.getLong("seq_scan"), "sequential scans of queen.log_txns");
                assertTrue(rs.getLong("idx_scan") > 0, "the probes did read log_txns, by its primary key");
            }
            c.rollback();
        }
    }

    private static UUID partitionId(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM queen.log_partitions WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), name);
                return rs.getObject(1, UUID.class);
            }
        }
    }

    private static long lastBase(Connection c, UUID partition) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT max(base_offset) FROM queen.log_txns WHERE partition_id = ?")) {
            ps.setObject(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Segments of FRAMES hashes each (the rows' size decides the planner's choice, so they are
     * the size a real 100-message push writes), straight through log_push_one_v1; the blob is
     * not read on these paths. Transaction ids are prefix-k for k = 1..segments × FRAMES.
     */
    private static void fill(Connection c, UUID partition, String prefix, int segments) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.log_push_one_v1(?, ?, ?, ?, NULL, false, NULL, NULL)")) {
            for (int i = 0; i < segments; i++) {
                List<String> txns = new ArrayList<>(FRAMES);
                for (int k = 1; k <= FRAMES; k++) {
                    txns.add(prefix + "-" + (i * FRAMES + k));
                }
                ps.setObject(1, partition);
                ps.setInt(2, FRAMES);
                ps.setBytes(3, new byte[]{1});
                ps.setBytes(4, TxnHash.concat(txns));
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static String push(Connection c, UUID partition, String txn, Long vouchedFrom, Long vouchedTo)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queen.log_push_one_v1(?, 1, ?, ?, NULL, true, ?, ?)::text")) {
            ps.setObject(1, partition);
            ps.setBytes(2, new byte[]{1});
            ps.setBytes(3, TxnHash.of(txn));
            ps.setObject(4, vouchedFrom, java.sql.Types.BIGINT);
            ps.setObject(5, vouchedTo, java.sql.Types.BIGINT);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
