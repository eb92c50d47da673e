package io.queen.broker.store;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * queen.log_push_one_v1 allocates every offset, on two paths: one UPDATE that allocates and writes
 * when no probe can find anything (the fast path), and the general path that locks the row, reads
 * the queue's window and probes. Both must keep a partition's offsets dense and its created_at in
 * offset order while they race, and the fast path must never skip a probe that could find a
 * duplicate: a row outside the vouched block, before or after it.
 */
class PushAllocatorIT {
    private static final int WRITERS = 6;
    private static final int PUSHES_PER_WRITER = 60;
    private static DatabaseSettings db;
    private static Broker broker;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("push_allocator");
        broker = BrokerFixture.start(db, Map.of());  // applies the schema
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void racingPushesOnBothPathsKeepOffsetsDenseAndCreatedAtInOffsetOrder() throws Exception {
        UUID partition = provision("race");
        CountDownLatch go = new CountDownLatch(1);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            threads.add(Thread.ofPlatform().start(() -> {
                try (Connection c = TestPostgres.connect(db)) {
                    go.await();
                    for (int k = 0; k < PUSHES_PER_WRITER; k++) {
                        int count = 1 + (writer + k) % 5;
                        List<String> txns = new ArrayList<>();
                        for (int i = 0; i < count; i++) {
                            txns.add("w" + writer + "-" + k + "-" + i);
                        }
                        // Even writers never probe (the fast path); odd ones probe with nothing vouched (the general path).
                        boolean probe = writer % 2 == 1;
                        LogStore.PushVerdict v = LogStore.pushOne(c, partition, count, new byte[] {1},
                                TxnHash.concat(txns), null, probe, null, null);
                        assertTrue(v.queued());
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(failures.isEmpty(), () -> "writer failed: " + failures.peek());

        long expected = 0;
        for (int w = 0; w < WRITERS; w++) {
            for (int k = 0; k < PUSHES_PER_WRITER; k++) {
                expected += 1 + (w + k) % 5;
            }
        }
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("""
                     SELECT s.base_offset, s.end_offset, s.created_at, t.base_offset, t.end_offset, t.created_at
                     FROM queen.log_segments s
                     FULL JOIN queen.log_txns t ON t.partition_id = s.partition_id AND t.base_offset = s.base_offset
                     WHERE coalesce(s.partition_id, t.partition_id) = ?
                     ORDER BY coalesce(s.base_offset, t.base_offset)""")) {
            ps.setObject(1, partition);
            long next = 0;
            Timestamp previous = null;
            int rows = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    assertEquals(next, rs.getLong(1), "segments are dense: the next one starts where the last ended");
                    assertEquals(rs.getLong(1), rs.getLong(4), "every segment has its sidecar row");
                    assertEquals(rs.getLong(2), rs.getLong(5));
                    assertEquals(rs.getTimestamp(3), rs.getTimestamp(6), "segment and sidecar share created_at");
                    Timestamp at = rs.getTimestamp(3);
                    if (previous != null) {
                        assertFalse(at.before(previous), "created_at follows offset order at offset " + next);
                    }
                    previous = at;
                    next = rs.getLong(2) + 1;
                }
            }
            assertEquals(WRITERS * PUSHES_PER_WRITER, rows);
            assertEquals(expected, next);
            assertEquals(expected - 1, partitionLong(c, partition, "last_offset"));
            // The first write found the partition empty and set the oldest stamps to its own created_at.
            try (PreparedStatement stamps = c.prepareStatement("""
                    SELECT p.oldest_live_at = s.created_at AND p.oldest_txn_at = s.created_at
                    FROM queen.log_partitions p JOIN queen.log_segments s ON s.partition_id = p.id AND s.base_offset = 0
                    WHERE p.id = ?""")) {
                stamps.setObject(1, partition);
                try (ResultSet rs = stamps.executeQuery()) {
                    assertTrue(rs.next());
                    assertTrue(rs.getBoolean(1), "oldest_live_at and oldest_txn_at are the first segment's created_at");
                }
            }
        }
    }

    @Test
    void aVouchedPushStillFindsADuplicateWrittenAfterTheBlockByAnotherWriter() throws Exception {
        UUID partition = provision("after");
        try (Connection c = TestPostgres.connect(db)) {
            LogStore.PushVerdict mine = LogStore.pushOne(c, partition, 2, new byte[] {1},
                    TxnHash.concat(List.of("a", "b")), null, true, null, null);
            assertTrue(mine.queued());
            // Another broker writes after this broker's block [0, 1].
            assertTrue(LogStore.pushOne(c, partition, 1, new byte[] {1}, TxnHash.concat(List.of("c")), null, false,
                    null, null).queued());

            LogStore.PushVerdict again = LogStore.pushOne(c, partition, 2, new byte[] {1},
                    TxnHash.concat(List.of("new", "c")), null, true, 0L, 1L);
            assertFalse(again.queued(), "c sits after the vouched block: the probe must run and find it");
            assertEquals(1, again.duplicates().size());
            assertEquals(1L, again.duplicates().get(0)[0]);
            assertEquals(2L, again.duplicates().get(0)[1]);
            assertEquals(2L, partitionLong(c, partition, "last_offset"), "a duplicate verdict writes nothing");
        }
    }

    @Test
    void aVouchedPushStillFindsADuplicateWrittenBeforeTheBlock() throws Exception {
        UUID partition = provision("before");
        try (Connection c = TestPostgres.connect(db)) {
            // Offset 0 was written before this broker's block (say, before it restarted).
            assertTrue(LogStore.pushOne(c, partition, 1, new byte[] {1}, TxnHash.concat(List.of("old")), null, false,
                    null, null).queued());
            assertTrue(LogStore.pushOne(c, partition, 1, new byte[] {1}, TxnHash.concat(List.of("x")), null, true,
                    null, null).queued());

            LogStore.PushVerdict again = LogStore.pushOne(c, partition, 1, new byte[] {1},
                    TxnHash.concat(List.of("old")), null, true, 1L, 1L);
            assertFalse(again.queued(), "offset 0 is before the vouched block: the probe must run and find it");
            assertEquals(0L, again.duplicates().get(0)[1]);

            LogStore.PushVerdict fresh = LogStore.pushOne(c, partition, 1, new byte[] {1},
                    TxnHash.concat(List.of("fresh")), null, true, 1L, 1L);
            assertTrue(fresh.queued());
            assertEquals(2L, fresh.baseOffset());
        }
    }

    @Test
    void bytesThatStraddleTwoStoredHashesAreNoDuplicateAndRealOnesKeepTheirOffsets() throws Exception {
        UUID partition = provision("straddle");
        try (Connection c = TestPostgres.connect(db)) {
            byte[] ab = TxnHash.concat(List.of("a", "b"));
            assertTrue(LogStore.pushOne(c, partition, 2, new byte[] {1}, ab, null, true, null, null).queued());
            assertTrue(LogStore.pushOne(c, partition, 2, new byte[] {1}, TxnHash.concat(List.of("c", "d")), null,
                    true, null, null).queued());
            // The last 8 bytes of a's hash and the first 8 of b's: found by a byte search, matching no hash.
            byte[] straddle = java.util.Arrays.copyOfRange(ab, 8, 24);

            LogStore.PushVerdict lone = LogStore.pushOne(c, partition, 1, new byte[] {1}, straddle, null, true,
                    null, null);
            assertTrue(lone.queued(), "a byte match across two stored hashes is not a stored hash");
            assertEquals(4L, lone.baseOffset());

            byte[] mixed = new byte[48];
            System.arraycopy(TxnHash.concat(List.of("new", "d")), 0, mixed, 0, 32);
            System.arraycopy(straddle, 0, mixed, 32, 16);
            LogStore.PushVerdict again = LogStore.pushOne(c, partition, 3, new byte[] {1}, mixed, null, true,
                    null, null);
            assertFalse(again.queued(), "d is stored at offset 3");
            assertEquals(2, again.duplicates().size(), "d, and the straddle pushed alone at offset 4");
            assertEquals(List.of(1L, 3L), List.of(again.duplicates().get(0)[0], again.duplicates().get(0)[1]));
            assertEquals(List.of(2L, 4L), List.of(again.duplicates().get(1)[0], again.duplicates().get(1)[1]));
        }
    }

    @Test
    void aPushToAMissingPartitionFailsOnEitherPath() throws Exception {
        try (Connection c = TestPostgres.connect(db)) {
            for (boolean probe : new boolean[] {false, true}) {
                SQLException e = assertThrows(SQLException.class,
                        () -> LogStore.pushOne(c, UUID.randomUUID(), 1, new byte[] {1}, TxnHash.concat(List.of("z")),
                                null, probe, probe ? 0L : null, probe ? 0L : null));
                assertEquals("P0002", e.getSQLState());
            }
        }
    }

    private static UUID provision(String partition) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT partition_id FROM queen.log_provision_v1(?, ?, ?)")) {
            ps.setObject(1, Tenants.DEFAULT);
            ps.setString(2, "allocator");
            ps.setString(3, partition);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                UUID id = rs.getObject(1, UUID.class);
                assertNotNull(id);
                return id;
            }
        }
    }

    private static long partitionLong(Connection c, UUID partition, String column) throws SQLException {
        // column is one of this test's literals, never input.
        try (PreparedStatement ps = c.prepareStatement("SELECT " + column + " FROM queen.log_partitions WHERE id = ?")) {
            ps.setObject(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return rs.getLong(1);
            }
        }
    }
}
