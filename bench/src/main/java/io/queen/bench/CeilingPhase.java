package io.queen.bench;

import io.queen.broker.config.EngineSettings;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.engine.segment.UuidV7;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The raw PostgreSQL ceiling for the push path: the same segment blobs and hash rows the broker
 * writes (SegmentCodec.encode of {@code perSegment} frames, TxnHash.concat), inserted straight with
 * JDBC into copies of queen.log_segments and queen.log_txns, one segment row + one txns row per
 * transaction, by as many writers as there are producers. No partition lock, offset allocation or
 * dedup probe: offsets are assigned client-side. Blobs are encoded before the clock starts.
 */
final class CeilingPhase {
    /** The level the broker under test compresses at: QUEEN_V2_ZSTD_LEVEL (inherited by it) or its default. */
    private static final int ZSTD_LEVEL = zstdLevel();
    private static final int DISTINCT_SEGMENTS = 16;

    record Outcome(long messages, long elapsedNanos) {
        double messagesPerSecond() {
            return messages / (elapsedNanos / 1e9);
        }
    }

    private record Segment(byte[] blob, byte[] hashes) {
    }

    private CeilingPhase() {
    }

    private static int zstdLevel() {
        String v = System.getenv("QUEEN_V2_ZSTD_LEVEL");
        return v == null || v.isBlank() ? EngineSettings.DEFAULT_ZSTD_LEVEL : Integer.parseInt(v.trim());
    }

    static Outcome run(PgServer.Database db, int partitions, long segments, int perSegment, int writers,
                       Payloads payloads, Progress progress) throws SQLException, InterruptedException {
        createTables(db);
        List<Segment> pool = encodeSegments(perSegment, payloads);
        UUID[] partitionIds = new UUID[partitions];
        for (int i = 0; i < partitions; i++) {
            partitionIds[i] = UUID.randomUUID();
        }
        AtomicLong next = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        // Connections are opened before the clock starts, as the broker's pool is warm.
        CountDownLatch ready = new CountDownLatch(writers);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            threads.add(Thread.ofPlatform().name("bench-ceiling-" + w).start(() -> {
                try (Writer writer = new Writer(db, partitionIds, perSegment, pool)) {
                    ready.countDown();
                    go.await();
                    for (long k; (k = next.getAndIncrement()) < segments; ) {
                        writer.write(k);
                        progress.add(perSegment);
                    }
                } catch (SQLException | RuntimeException e) {
                    failure.compareAndSet(null, e);
                    ready.countDown();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long elapsed = System.nanoTime() - start;
        if (failure.get() != null) {
            throw new SQLException("ceiling writer failed: " + failure.get().getMessage(), failure.get());
        }
        return new Outcome(segments * perSegment, elapsed);
    }

    /** Same columns, primary keys and storage (blob EXTERNAL) as the broker's tables. */
    private static void createTables(PgServer.Database db) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS bench_ceiling_segments, bench_ceiling_txns");
            st.execute("CREATE TABLE bench_ceiling_segments (LIKE queen.log_segments INCLUDING ALL)");
            st.execute("CREATE TABLE bench_ceiling_txns (LIKE queen.log_txns INCLUDING ALL)");
        }
    }

    private static List<Segment> encodeSegments(int perSegment, Payloads payloads) {
        List<Segment> pool = new ArrayList<>();
        long seq = 0;
        for (int s = 0; s < DISTINCT_SEGMENTS; s++) {
            List<Frame> frames = new ArrayList<>(perSegment);
            List<String> txns = new ArrayList<>(perSegment);
            for (int i = 0; i < perSegment; i++, seq++) {
                String txn = Payloads.transactionId(seq);
                frames.add(new Frame(UuidV7.next(), null, txn, null, payloads.bytes(seq, System.nanoTime()), false));
                txns.add(txn);
            }
            pool.add(new Segment(SegmentCodec.encode(frames, ZSTD_LEVEL), TxnHash.concat(txns)));
        }
        return pool;
    }

    /** One writer's connection: segment k goes to partition k % P at offset (k / P) × perSegment. */
    private static final class Writer implements AutoCloseable {
        private final Connection connection;
        private final PreparedStatement insertSegment;
        private final PreparedStatement insertTxns;
        private final UUID[] partitionIds;
        private final int perSegment;
        private final List<Segment> pool;

        Writer(PgServer.Database db, UUID[] partitionIds, int perSegment, List<Segment> pool) throws SQLException {
            this.connection = db.connect();
            this.connection.setAutoCommit(false);
            this.insertSegment = connection.prepareStatement("INSERT INTO bench_ceiling_segments "
                    + "(partition_id, base_offset, end_offset, created_at, blob) VALUES (?, ?, ?, now(), ?)");
            this.insertTxns = connection.prepareStatement("INSERT INTO bench_ceiling_txns "
                    + "(partition_id, base_offset, end_offset, created_at, hashes) VALUES (?, ?, ?, now(), ?)");
            this.partitionIds = partitionIds;
            this.perSegment = perSegment;
            this.pool = pool;
        }

        /** One transaction: one segment row and its txns row. */
        void write(long k) throws SQLException {
            UUID partition = partitionIds[(int) (k % partitionIds.length)];
            long base = k / partitionIds.length * perSegment;
            Segment s = pool.get((int) (k % pool.size()));
            bind(insertSegment, partition, base, base + perSegment - 1, s.blob());
            insertSegment.executeUpdate();
            bind(insertTxns, partition, base, base + perSegment - 1, s.hashes());
            insertTxns.executeUpdate();
            connection.commit();
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }

    private static void bind(PreparedStatement ps, UUID partition, long base, long end, byte[] bytes)
            throws SQLException {
        ps.setObject(1, partition);  // partition_id
        ps.setLong(2, base);         // base_offset
        ps.setLong(3, end);          // end_offset
        ps.setBytes(4, bytes);       // blob / hashes
    }
}
