package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lock order of POST /transaction with riders (broker/DESIGN.md, Lock order), on a real
 * PostgreSQL. One test watches the order in which a transaction writes each lock space (row
 * triggers record it, per transaction id): no KV or timer row after a queue, partition or consumer
 * row. The other runs transactions with riders, pushes, acks, KV and timer batches and the timer
 * fire from many threads against a few hot keys and partitions, and counts deadlocks: none.
 */
class TransactionLockOrderIT {
    private static final String[] PARTITIONS = {"p0", "p1", "p2", "p3"};

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A random {@code n} of {@code pool}, in random order. */
    private static List<String> some(String[] pool, int n) {
        List<String> l = new ArrayList<>(List.of(pool));
        Collections.shuffle(l, ThreadLocalRandom.current());
        return l.subList(0, n);
    }

    private static String kvRider(String[] keys) {
        StringBuilder sb = new StringBuilder();
        for (String k : some(keys, 3)) {
            sb.append(sb.isEmpty() ? "" : ",");
            sb.append(ThreadLocalRandom.current().nextBoolean()
                    ? "{\"op\":\"put\",\"ns\":\"lock\",\"key\":\"" + k + "\",\"value\":1,\"ttlSeconds\":600}"
                    : "{\"op\":\"incr\",\"ns\":\"lock\",\"key\":\"" + k + "\",\"delta\":1,\"ttlSeconds\":600}");
        }
        return sb.toString();
    }

    private static String timerRider(String queue, String[] keys, String outQueue, long maxDelayMs) {
        StringBuilder sb = new StringBuilder();
        for (String k : some(keys, 2)) {
            sb.append(sb.isEmpty() ? "" : ",").append("{\"op\":\"schedule\",\"queue\":\"").append(outQueue)
                    .append("\",\"partition\":\"").append(PARTITIONS[ThreadLocalRandom.current().nextInt(4)])
                    .append("\",\"timerKey\":\"").append(queue).append('-').append(k)
                    .append("\",\"delayMs\":").append(ThreadLocalRandom.current().nextLong(maxDelayMs + 1))
                    .append(",\"txn\":\"").append(java.util.UUID.randomUUID())
                    .append("\",\"payload\":\"").append(b64("{\"t\":1}")).append("\"}");
        }
        return sb.toString();
    }

    private static String pushItems(String queue, int n) {
        StringBuilder sb = new StringBuilder();
        for (String p : some(PARTITIONS, n)) {
            sb.append(sb.isEmpty() ? "" : ",").append("{\"queue\":\"").append(queue).append("\",\"partition\":\"")
                    .append(p).append("\",\"payload\":{\"n\":1}}");
        }
        return sb.toString();
    }

    private static String ackOf(JsonNode pop) {
        JsonNode m = pop.get("messages").get(0);
        return "{\"type\":\"ack\",\"transactionId\":\"" + m.get("transactionId").asText() + "\",\"partitionId\":\""
                + m.get("partitionId").asText() + "\",\"leaseId\":\"" + pop.get("leaseId").asText() + "\"}";
    }

    private static String transaction(String ack, String queue, String kv, String timers) {
        return "{\"operations\":[" + (ack == null ? "" : ack + ",") + "{\"type\":\"push\",\"items\":["
                + pushItems(queue, 2) + "]}],\"kv\":[" + kv + "],\"timers\":[" + timers + "]}";
    }

    @Test
    void noTransactionWritesKvOrTimerRowsAfterAQueuePartitionOrConsumerRow() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("txn_lock_order");
        // No fire here: a fire deletes the timer rows it holds after writing partitions, which is a
        // write to rows held since its first statement, not a new lock, and this probe cannot tell.
        Broker broker = BrokerFixture.start(db, Map.of("QUEEN_SWEEPER", "false"));
        try {
            BrokerFixture.sql(db, "CREATE TABLE public.lock_trace (seq bigserial PRIMARY KEY, xid bigint NOT NULL,"
                    + " space text NOT NULL)");
            BrokerFixture.sql(db, "CREATE FUNCTION public.lock_trace_row() RETURNS trigger LANGUAGE plpgsql AS $$"
                    + " BEGIN INSERT INTO public.lock_trace (xid, space) VALUES (txid_current(), TG_TABLE_NAME);"
                    + " RETURN NULL; END $$");
            for (String table : List.of("kv", "log_timers", "queues", "log_partitions", "log_consumers")) {
                BrokerFixture.sql(db, "CREATE TRIGGER lock_trace_" + table + " AFTER INSERT OR UPDATE OR DELETE ON queen."
                        + table + " FOR EACH ROW EXECUTE FUNCTION public.lock_trace_row()");
            }
            HttpProbe http = new HttpProbe(broker.port());
            String[] keys = {"a", "b", "c", "d"};
            for (int i = 0; i < 12; i++) {
                String queue = "lo_out" + (i % 3);
                http.push("lo_in", PARTITIONS[i % 4], "{\"i\":" + i + "}");
                JsonNode pop = http.get("/api/v1/pop/queue/lo_in?batch=1").json();
                Reply r = http.post("/api/v1/transaction",
                        transaction(ackOf(pop), queue, kvRider(keys), timerRider("lo_t", keys, queue, 600_000)));
                assertEquals(200, r.status(), r.body());
                assertTrue(r.json().get("success").asBoolean(), r.body());
            }
            try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("""
                         SELECT xid,
                                max(seq) FILTER (WHERE space IN ('kv', 'log_timers')) AS inner_last,
                                min(seq) FILTER (WHERE space IN ('queues', 'log_partitions', 'log_consumers')) AS outer_first,
                                bool_or(space = 'log_consumers') AS acked
                           FROM public.lock_trace GROUP BY xid
                         HAVING bool_or(space IN ('kv', 'log_timers'))
                            AND bool_or(space IN ('queues', 'log_partitions', 'log_consumers'))""")) {
                int checked = 0;
                int withAck = 0;
                while (rs.next()) {
                    checked++;
                    withAck += rs.getBoolean(4) ? 1 : 0;
                    assertTrue(rs.getLong(2) < rs.getLong(3), "transaction " + rs.getLong(1)
                            + " wrote a KV or timer row after a queue, partition or consumer row");
                }
                assertEquals(12, checked, "every transaction wrote both kinds of space, so each one was checked");
                assertEquals(12, withAck, "and each one acked");
            }
        } finally {
            broker.close();
        }
    }

    @Test
    void concurrentTransactionsWithRidersPushesAcksAndFiresNeverDeadlock() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("txn_deadlock");
        Broker broker = BrokerFixture.start(db, Map.of("QUEEN_SWEEPER_MIN_SLEEP_MS", "1",
                "QUEEN_SWEEPER_MAX_SLEEP_MS", "20", "DB_POOL_SIZE", "24", "QUEEN_KV_WRITE_RATE", "1000000",
                "QUEEN_KV_WRITE_BURST", "1000000", "QUEEN_KV_READ_RATE", "1000000", "QUEEN_KV_READ_BURST", "1000000",
                "QUEEN_KV_CELL_RATE", "0"));
        HttpProbe http = new HttpProbe(broker.port());
        String[] kvKeys = {"k0", "k1", "k2", "k3", "k4", "k5"};
        String[] timerKeys = {"t0", "t1", "t2", "t3", "t4", "t5"};
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger transactions = new AtomicInteger();
        AtomicInteger acks = new AtomicInteger();
        AtomicInteger kinds = new AtomicInteger();
        long deadlocksBefore = deadlocks(db);
        // At least 4 s, and on a loaded host until enough work is done (at most 40 s): the run proves
        // nothing if too few transactions met the fire and each other.
        long until = System.nanoTime() + 4_000_000_000L;
        long hardStop = System.nanoTime() + 40_000_000_000L;
        BooleanSupplier more = () -> System.nanoTime() < until
                || (transactions.get() <= 50 || acks.get() <= 5) && System.nanoTime() < hardStop;
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                JsonNode held = null;
                while (more.getAsBoolean()) {
                    int pick = ThreadLocalRandom.current().nextInt(100);
                    Reply r;
                    if (pick < 45) {
                        r = http.post("/api/v1/transaction", transaction(held == null ? null : ackOf(held), "dl_out",
                                kvRider(kvKeys), timerRider("dl", timerKeys, "dl_out", 20)));
                        transactions.incrementAndGet();
                        if (held != null && r.status() == 200 && r.json().path("success").asBoolean()) {
                            acks.incrementAndGet();
                        }
                        held = null;
                        if (r.status() == 200 && !r.json().path("success").asBoolean()) {
                            failures.add("rolled back: " + r.body());
                        }
                    } else if (pick < 60) {
                        r = http.post("/api/v1/push", "{\"items\":[" + pushItems("dl_out", 2) + "]}");
                    } else if (pick < 75) {
                        r = http.get("/api/v1/pop/queue/dl_out?batch=1");
                        if (r.status() == 200 && held == null) {
                            held = r.json();
                        } else if (r.status() == 200) {
                            // Already holding one: ack this one on the plain route.
                            r = http.post("/api/v1/ack", ackOf(r.json()).replace("\"type\":\"ack\",", ""));
                        }
                    } else if (pick < 90) {
                        StringBuilder ops = new StringBuilder();
                        for (String k : some(kvKeys, 3)) {
                            ops.append(ops.isEmpty() ? "" : ",").append("{\"op\":\"incr\",\"ns\":\"lock\",\"key\":\"")
                                    .append(k).append("\",\"delta\":1,\"ttlSeconds\":600}");
                        }
                        r = http.post("/api/v1/kv", "[" + ops + "]");
                    } else {
                        r = http.post("/api/v1/timers", "{\"operations\":[" + timerRider("dl", timerKeys, "dl_out", 5)
                                + "]}");
                    }
                    kinds.incrementAndGet();
                    if (r.status() >= 300) {
                        failures.add(r.status() + ": " + r.body());
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        // Let the fire drain what is due, so it ran against the same rows throughout.
        Awaitility.await("the fire drains the due timers").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50)).until(() -> dueTimers(db) == 0);
        broker.close(); // its backends exit and flush their statistics
        long deadlocks = deadlocks(db) - deadlocksBefore;
        System.out.printf("lock order run: %d calls, %d transactions with riders, %d acks in them, %d timer fires,"
                + " %d deadlocks%n", kinds.get(), transactions.get(), acks.get(), fired(db), deadlocks);
        assertTrue(transactions.get() > 50, "the run did real work: " + transactions.get() + " transactions");
        assertTrue(acks.get() > 5, "acks rode the transactions: " + acks.get());
        assertTrue(fired(db) > 0, "the timer fire ran against the same partitions");
        assertEquals(List.of(), List.copyOf(failures), "every call answered as asked");
        assertEquals(0, deadlocks, "no 40P01 in " + kinds.get() + " calls");
    }

    private static long deadlocks(DatabaseSettings db) throws SQLException {
        try (Connection c = TestPostgres.admin();
             PreparedStatement ps = c.prepareStatement("SELECT deadlocks FROM pg_stat_database WHERE datname = ?")) {
            ps.setString(1, db.database());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    /** Timer rows a fire could claim now: due, and neither claimed nor backing off. */
    private static long dueTimers(DatabaseSettings db) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.log_timers WHERE visible_at <= now()")) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    /** Timer rows deleted: this run cancels none, so each one is a fire (read after the broker closed). */
    private static long fired(DatabaseSettings db) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT n_tup_del FROM pg_stat_user_tables"
                     + " WHERE schemaname = 'queen' AND relname = 'log_timers'")) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }
}
