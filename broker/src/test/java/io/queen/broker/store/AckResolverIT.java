package io.queen.broker.store;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * queen.log_ack_resolve_v1 maps acked transactionId hashes to offsets: in delivery order from the
 * cursor by comparing the sidecar bytes (the fast path), otherwise by a hash join. Both must give
 * the same offsets wherever they both apply; a transactionId repeated inside the span is where
 * they differ, and it shows which path ran.
 *
 * <p>Layout of partition {@code p}: offsets 0-3 are a1-a4 and 4-7 are a5-a8 (two pushes, two
 * sidecar rows), 8-10 are d, d, e (a third row written straight through log_push_one_v1, as a
 * queue without deduplication could store them). Each test runs in a transaction rolled back after it.
 */
class AckResolverIT {
    private static Broker broker;
    private static DatabaseSettings db;
    private static UUID partition;
    private Connection c;

    @BeforeAll
    static void start() throws Exception {
        db = TestPostgres.freshDatabase("ack_resolver");
        broker = BrokerFixture.start(db, Map.of());
        HttpProbe http = new HttpProbe(broker.port());
        for (int first : new int[] {1, 5}) {
            StringBuilder items = new StringBuilder();
            for (int k = first; k < first + 4; k++) {
                items.append(items.isEmpty() ? "" : ",").append("{\"queue\":\"resolve\",\"partition\":\"p\",")
                        .append("\"payload\":{\"k\":").append(k).append("},\"transactionId\":\"a").append(k).append("\"}");
            }
            assertEquals(201, http.post("/api/v1/push", "{\"items\":[" + items + "]}").status());
        }
        // Creates the queue-mode cursor row, leased over offset 0.
        assertEquals(200, http.get("/api/v1/pop/queue/resolve/partition/p?batch=1").status());
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT id FROM queen.log_partitions WHERE name = 'p'")) {
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                partition = rs.getObject(1, UUID.class);
            }
            try (PreparedStatement push = c.prepareStatement(
                    "SELECT queen.log_push_one_v1(?, 3, '\\x01'::bytea, ?, NULL, false, NULL, NULL)")) {
                push.setObject(1, partition);
                push.setBytes(2, TxnHash.concat(List.of("d", "d", "e")));
                push.execute();
            }
        }
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @BeforeEach
    void begin() throws SQLException {
        c = TestPostgres.connect(db);
        c.setAutoCommit(false);
        // The lease now covers everything stored (as a pop of batch 11 would leave it).
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE queen.log_consumers SET batch_end = 10 WHERE partition_id = ?")) {
            ps.setObject(1, partition);
            assertEquals(1, ps.executeUpdate());
        }
    }

    @AfterEach
    void end() throws SQLException {
        c.rollback();
        c.close();
    }

    @Test
    void inDeliveryOrderFromTheCursorAcrossSidecarRows() throws SQLException {
        assertEquals(offsets(0, 10), resolve(true, "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "d", "d", "e"));
        assertEquals(offsets(0, 2), resolve(true, "a1", "a2", "a3"));
        assertEquals(offsets(0, 0), resolve(true, "a1"));
    }

    @Test
    void aRepeatedTransactionIdResolvesToEachOfItsOffsetsOnlyInDeliveryOrder() throws SQLException {
        // In order from the cursor: the fast path, both d's acked.
        assertEquals(Arrays.asList(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L),
                resolve(true, "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "d", "d"));
        // Not starting at the cursor: the join, which maps both to the lower offset.
        assertEquals(Arrays.asList(8L, 8L), resolve(true, "d", "d"));
    }

    @Test
    void outOfOrderSubsetsAndUnknownsTakeTheJoin() throws SQLException {
        assertEquals(Arrays.asList(7L, 6L, 5L, 4L, 3L, 2L, 1L, 0L),
                resolve(true, "a8", "a7", "a6", "a5", "a4", "a3", "a2", "a1"));
        assertEquals(Arrays.asList(1L, 2L, 3L, 4L), resolve(true, "a2", "a3", "a4", "a5"));
        assertEquals(Arrays.asList(0L, null, 2L), resolve(true, "a1", "zz", "a3"));
        assertEquals(Arrays.asList(null, null), resolve(true, "zz", "yy"));
    }

    @Test
    void aLeasedAckDoesNotResolvePastTheBatchEnd() throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE queen.log_consumers SET batch_end = 5 WHERE partition_id = ?")) {
            ps.setObject(1, partition);
            ps.executeUpdate();
        }
        assertEquals(Arrays.asList(0L, 1L, 2L, 3L, 4L, 5L, null),
                resolve(true, "a1", "a2", "a3", "a4", "a5", "a6", "a7"));
        assertEquals(offsets(0, 6), resolve(false, "a1", "a2", "a3", "a4", "a5", "a6", "a7"));
    }

    @Test
    void afterTheCursorMovesAcksResolveFromItAndOlderOnesReadAsBelowTheCursor() throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_ack_apply_v1(?, ?, 3, false, 0)")) {
            ps.setObject(1, partition);
            ps.setString(2, Tenants.QUEUE_MODE);
            ps.execute();
        }
        assertEquals(offsets(4, 7), resolve(true, "a5", "a6", "a7", "a8"));
        assertEquals(Arrays.asList(null, 4L), resolve(true, "a1", "a5"));
        assertEquals(List.of(true, false), belowCursor("a1", "a5"));
    }

    private List<Long> resolve(boolean bounded, String... txns) throws SQLException {
        try (ResultSet rs = call(bounded, txns)) {
            return Arrays.asList((Long[]) rs.getArray("span_offsets").getArray());
        }
    }

    private List<Boolean> belowCursor(String... txns) throws SQLException {
        try (ResultSet rs = call(true, txns)) {
            return Arrays.asList((Boolean[]) rs.getArray("below_cursor").getArray());
        }
    }

    private ResultSet call(boolean bounded, String... txns) throws SQLException {
        PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.log_ack_resolve_v1(?, ?, ?, ?, ?)");
        ps.closeOnCompletion();
        ps.setObject(1, partition);
        ps.setString(2, Tenants.QUEUE_MODE);
        ps.setBytes(3, TxnHash.concat(List.of(txns)));
        ps.setObject(4, Tenants.DEFAULT);
        ps.setBoolean(5, bounded);
        ResultSet rs = ps.executeQuery();
        assertTrue(rs.next());
        assertTrue(rs.getBoolean("consumer_found"));
        return rs;
    }

    private static List<Long> offsets(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long o = from; o <= to; o++) {
            out.add(o);
        }
        return out;
    }
}
