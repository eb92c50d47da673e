package io.queen.broker.engine.streams;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.QueueCatalog;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.engine.TransactionalPush;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.store.Database;
import io.queen.broker.store.SchemaApplier;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The streams cycle through the engine on a real PostgreSQL: its three parts commit together or not
 * at all, its sink pushes are the partition writer's (segments, encryption, dedup), commits are
 * published only once committed, and cycles on different partitions of one query run side by side.
 */
class StreamServiceIT {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final String KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    private static Database db;
    private static PushService push;
    private static StreamService streams;
    private static final List<String> published = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        DatabaseSettings settings = TestPostgres.freshDatabase("streams_engine");
        db = Database.open(settings);
        new SchemaApplier(db.dataSource()).apply();
        push = new PushService(db, new QueueCatalog(), PayloadCipher.fromHexKey(KEY), (t, q, p) -> { }, 3, 10_000);
        streams = new StreamService(db, push, (t, q, p) -> published.add(q + "/" + p), new SurfaceMetrics());
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    @BeforeEach
    void clear() {
        published.clear();
    }

    // ---------------------------------------------------------------- helpers

    private static UUID register(String name) throws SQLException {
        StreamService.RegisterOutcome r = streams.register(TENANT,
                new StreamService.Registration(name, "src", null, "hash", false));
        return assertInstanceOf(StreamService.Registered.class, r).queryId();
    }

    /** Pushes {@code n} messages to the source partition; returns its id. */
    private static UUID source(String queue, int n) throws SQLException {
        List<PushService.Item> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add(new PushService.Item(queue, "p", ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8), null,
                    null));
        }
        push.push(TENANT, items);
        return scalar(UUID.class, "SELECT lp.id FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id"
                + " WHERE q.name = ? AND lp.name = 'p'", queue);
    }

    private static void lease(UUID partition, String group, int batch, String lease) throws SQLException {
        scalar(Long.class, "SELECT coalesce(sum(take), 0)::bigint FROM queen.log_pop_v1(?, ?, ?, 30, ?, false, NULL, NULL)",
                partition, group, batch, lease);
    }

    private static <T> T scalar(Class<T> type, String sql, Object... params) throws SQLException {
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getObject(1, type) : null;
            }
        }
    }

    private static long count(String sql, Object... params) throws SQLException {
        Long n = scalar(Long.class, sql, params);
        return n == null ? 0 : n;
    }

    private static long sinkFrames(String queue) throws SQLException {
        return count("SELECT coalesce(sum(s.end_offset - s.base_offset + 1), 0)::bigint FROM queen.log_segments s"
                + " JOIN queen.log_partitions lp ON lp.id = s.partition_id JOIN queen.queues q ON q.id = lp.queue_id"
                + " WHERE q.name = ?", queue);
    }

    private static long stateRows(UUID query) throws SQLException {
        return count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?", query);
    }

    private static StreamService.StateOp upsert(String key, String json) {
        return new StreamService.StateOp(StreamService.StateOpType.UPSERT, key, json);
    }

    private static PushService.Item sinkItem(String queue, String txn, String json) {
        return new PushService.Item(queue, "out", json.getBytes(StandardCharsets.UTF_8), txn, null);
    }

    // ---------------------------------------------------------------- tests

    @Test
    void aCycleCommitsItsSinkPushesAckAndStateTogetherAndPublishesThem() throws Exception {
        UUID q = register("engine.commit");
        UUID p = source("eng_src", 3);
        lease(p, "g", 2, "lease-c");
        StreamService.CycleOutcome outcome = streams.cycle(TENANT, new StreamService.Cycle(q, p, "g",
                List.of(upsert("w1", "{\"count\":2}"), upsert("w2", "[1,2]")),
                List.of(sinkItem("eng_sink", null, "{\"total\":2}"), sinkItem("eng_sink", null, "{\"total\":3}")),
                new StreamService.Ack("lease-c", true, 2), true));
        StreamService.Committed done = assertInstanceOf(StreamService.Committed.class, outcome);
        assertEquals("eng_src", done.queueName());
        assertEquals(2, done.stateOpsApplied());
        assertEquals(1, done.pushes().size());
        TransactionalPush.GroupResult g = done.pushes().get(0);
        assertEquals(2, g.queued());
        assertEquals(0L, g.baseOffset());
        assertEquals(2, done.ack().count());
        assertTrue(done.ack().leaseReleased());
        assertEquals(2, sinkFrames("eng_sink"));
        assertEquals(1, count("SELECT committed FROM queen.log_consumers WHERE partition_id = ?", p));
        assertEquals(2, stateRows(q));
        assertEquals(List.of("eng_sink/out", "eng_src/p"), published,
                "the sink's partition, then the source's: its lease ended with a message behind it");
    }

    @Test
    void aFailingAckLeavesStateAndSinkUntouchedAndPublishesNothing() throws Exception {
        UUID q = register("engine.atomic");
        UUID p = source("atomic_src", 2);
        lease(p, "g", 2, "lease-a");
        streams.cycle(TENANT, new StreamService.Cycle(q, p, "g", List.of(upsert("kept", "1")), List.of(), null, true));
        StreamService.CycleOutcome outcome = streams.cycle(TENANT, new StreamService.Cycle(q, p, "g",
                List.of(upsert("kept", "2"), upsert("new", "3")),
                List.of(sinkItem("atomic_sink", null, "{}")),
                new StreamService.Ack("not-the-lease", true, 2), true));
        StreamService.Refused refused = assertInstanceOf(StreamService.Refused.class, outcome);
        assertEquals(StreamService.Refusal.LEASE_INVALID, refused.reason());
        assertEquals("atomic_src", refused.queueName());
        assertEquals(0, sinkFrames("atomic_sink"));
        assertEquals(0, count("SELECT count(*) FROM queen.queues WHERE name = 'atomic_sink'"),
                "even the sink queue provisioned inside the cycle rolled back");
        assertEquals("1", scalar(String.class, "SELECT value::text FROM queen_streams.state WHERE query_id = ?"
                + " AND key = 'kept'", q));
        assertEquals(1, stateRows(q));
        assertEquals(-1, count("SELECT committed FROM queen.log_consumers WHERE partition_id = ?", p));
        assertEquals("lease-a", scalar(String.class, "SELECT worker_id FROM queen.log_consumers WHERE partition_id = ?",
                p));
        assertEquals(List.of(), published);
    }

    @Test
    void unknownIdsAreRefusedBeforeAnythingIsWritten() throws Exception {
        UUID q = register("engine.unknown");
        UUID p = source("unknown_src", 1);
        List<PushService.Item> sink = List.of(sinkItem("unknown_sink", null, "{}"));
        StreamService.Refused noPartition = assertInstanceOf(StreamService.Refused.class, streams.cycle(TENANT,
                new StreamService.Cycle(q, UUID.randomUUID(), "g", List.of(), sink, null, true)));
        assertEquals(StreamService.Refusal.PARTITION_NOT_FOUND, noPartition.reason());
        StreamService.Refused noQuery = assertInstanceOf(StreamService.Refused.class, streams.cycle(TENANT,
                new StreamService.Cycle(UUID.randomUUID(), p, "g", List.of(), sink, null, true)));
        assertEquals(StreamService.Refusal.QUERY_NOT_FOUND, noQuery.reason());
        assertEquals(0, count("SELECT count(*) FROM queen.queues WHERE name = 'unknown_sink'"));
    }

    @Test
    void sinkPushesAreThePartitionWritersEncryptedAndDeduplicated() throws Exception {
        UUID q = register("engine.writer");
        UUID p = source("writer_src", 1);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES (?, 'writer_sink', true)")) {
            ps.setObject(1, TENANT);
            ps.execute();
        }
        StreamService.Committed first = assertInstanceOf(StreamService.Committed.class, streams.cycle(TENANT,
                new StreamService.Cycle(q, p, "g", List.of(),
                        List.of(sinkItem("writer_sink", "t1", "{\"secret\":1}"), sinkItem("writer_sink", "t1", "{}")),
                        null, true)));
        assertEquals(1, first.pushes().get(0).queued());
        assertEquals(1, first.pushes().get(0).duplicates(), "a repeat inside the cycle");
        byte[] blob = scalar(byte[].class, "SELECT s.blob FROM queen.log_segments s JOIN queen.log_partitions lp"
                + " ON lp.id = s.partition_id JOIN queen.queues qq ON qq.id = lp.queue_id WHERE qq.name = 'writer_sink'");
        Frame f = SegmentCodec.decode(blob).get(0);
        assertTrue(f.encrypted(), "the queue's encryption applies to sink pushes");
        assertFalse(new String(f.payload(), StandardCharsets.UTF_8).contains("secret"));
        assertEquals(1, count("SELECT count(*) FROM queen.log_txns t JOIN queen.log_partitions lp"
                + " ON lp.id = t.partition_id JOIN queen.queues qq ON qq.id = lp.queue_id WHERE qq.name = 'writer_sink'"),
                "the txn sidecar is written");

        StreamService.Committed again = assertInstanceOf(StreamService.Committed.class, streams.cycle(TENANT,
                new StreamService.Cycle(q, p, "g", List.of(),
                        List.of(sinkItem("writer_sink", "t1", "{}"), sinkItem("writer_sink", "t2", "{}")), null, true)));
        TransactionalPush.GroupResult g = again.pushes().get(0);
        assertEquals(1, g.queued());
        assertEquals(1, g.duplicates(), "t1 is inside the sink's dedup window");
        assertEquals(1L, g.baseOffset());
        assertEquals(2, sinkFrames("writer_sink"));

        StreamService.Committed allDuplicates = assertInstanceOf(StreamService.Committed.class, streams.cycle(TENANT,
                new StreamService.Cycle(q, p, "g", List.of(), List.of(sinkItem("writer_sink", "t2", "{}")), null,
                        true)));
        assertEquals(0, allDuplicates.pushes().get(0).queued());
        assertNull(allDuplicates.pushes().get(0).baseOffset());
    }

    @Test
    void cyclesOnDifferentPartitionsOfOneQueryRunConcurrently() throws Exception {
        UUID q = register("engine.concurrent");
        int partitions = 6;
        int rounds = 8;
        List<UUID> sources = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            List<PushService.Item> items = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                items.add(new PushService.Item("conc_src", "p" + i, "{}".getBytes(StandardCharsets.UTF_8), null, null));
            }
            push.push(TENANT, items);
            sources.add(scalar(UUID.class, "SELECT lp.id FROM queen.log_partitions lp JOIN queen.queues qq"
                    + " ON qq.id = lp.queue_id WHERE qq.name = 'conc_src' AND lp.name = ?", "p" + i));
        }
        Map<UUID, Integer> committed = new ConcurrentHashMap<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(partitions)) {
            List<Future<?>> all = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                UUID p = sources.get(i);
                int n = i;
                all.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        String lease = "lease-" + n + "-" + r;
                        lease(p, "g", 1, lease);
                        // Every cycle writes the same two sink partitions, listed in opposite orders by
                        // neighbours: the writer locks them ascending by id, so they cannot deadlock.
                        List<PushService.Item> sink = n % 2 == 0
                                ? List.of(new PushService.Item("conc_sink", "a", "{}".getBytes(), null, null),
                                new PushService.Item("conc_sink", "b", "{}".getBytes(), null, null))
                                : List.of(new PushService.Item("conc_sink", "b", "{}".getBytes(), null, null),
                                new PushService.Item("conc_sink", "a", "{}".getBytes(), null, null));
                        StreamService.CycleOutcome o = streams.cycle(TENANT, new StreamService.Cycle(q, p, "g",
                                List.of(upsert("count", "{\"n\":" + (r + 1) + "}")), sink,
                                new StreamService.Ack(lease, true, 1), true));
                        assertInstanceOf(StreamService.Committed.class, o);
                        committed.merge(p, 1, Integer::sum);
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        }
        assertEquals(partitions, committed.size());
        committed.values().forEach(n -> assertEquals(rounds, n));
        assertEquals(2L * partitions * rounds, sinkFrames("conc_sink"));
        assertEquals(partitions, stateRows(q), "one state row per partition: shards do not mix");
        for (UUID p : sources) {
            assertEquals(rounds - 1, count("SELECT committed FROM queen.log_consumers WHERE partition_id = ?", p));
            assertEquals("{\"n\": " + rounds + "}", scalar(String.class,
                    "SELECT value::text FROM queen_streams.state WHERE query_id = ? AND partition_id = ?", q, p));
        }
    }
}
