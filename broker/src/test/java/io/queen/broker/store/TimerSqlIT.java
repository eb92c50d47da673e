package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The timer procedures of 025_log_timers.sql called directly, as any SQL caller would: the upsert
 * and its statuses, the claim guard, the claim's SKIP LOCKED disjointness, hold / settle, fail and
 * the DLQ archive, and the queue delete's cleanup (013). Each test works in a tenant of its own.
 */
class TimerSqlIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static Database db;

    @BeforeAll
    static void start() {
        DatabaseSettings settings = TestPostgres.freshDatabase("timer_sql");
        db = Database.open(settings);
        new SchemaApplier(db.dataSource()).apply();
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    private static String op(String kind, String queue, String key, long delayMs, String txn) {
        return "{\"op\":\"" + kind + "\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\",\"delayMs\":" + delayMs
                + ",\"txn\":\"" + txn + "\",\"payload\":\""
                + Base64.getEncoder().encodeToString("{\"n\":1}".getBytes()) + "\",\"minted\":\"" + UUID.randomUUID() + "\"}";
    }

    private static JsonNode apply(UUID tenant, String ops) throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_apply_v1(?, ?::jsonb, 'sub')::text")) {
            ps.setObject(1, tenant);
            ps.setString(2, ops);
            return json(ps);
        }
    }

    private static JsonNode json(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return MAPPER.readTree(rs.getString(1));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    record Claimed(UUID tenant, String queue, String key, UUID token) {
    }

    private static List<Claimed> claim(Connection c, int max) throws SQLException {
        List<Claimed> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT tenant_id, queue, timer_key, claim_token FROM queen.log_timers_claim_v1(0, 30000, ?)")) {
            ps.setInt(1, max);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Claimed(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                            rs.getObject(4, UUID.class)));
                }
            }
        }
        return out;
    }

    @Test
    void scheduleRescheduleCancelAndAbsent() throws Exception {
        UUID t = UUID.randomUUID();
        JsonNode r = apply(t, "[" + op("schedule", "q1", "k1", 60_000, "tx1") + "]");
        assertEquals("scheduled", r.get(0).get("status").asText(), r.toString());
        assertTrue(r.get(0).get("ok").asBoolean());
        r = apply(t, "[" + op("reschedule", "q1", "k1", 120_000, "tx2") + "]");
        assertEquals("rescheduled", r.get(0).get("status").asText());
        assertEquals("tx2", r.get(0).get("txn").asText());
        r = apply(t, "[{\"op\":\"cancel\",\"queue\":\"q1\",\"timerKey\":\"k1\"}]");
        assertEquals("cancelled", r.get(0).get("status").asText());
        assertEquals("tx2", r.get(0).get("txn").asText());
        r = apply(t, "[{\"op\":\"cancel\",\"queue\":\"q1\",\"timerKey\":\"k1\",\"txn\":\"tx2\"}]");
        assertEquals("absent", r.get(0).get("status").asText());
        assertFalse(r.get(0).get("ok").asBoolean());
        assertEquals("tx2", r.get(0).get("txn").asText());
        SQLException dup = assertThrows(SQLException.class, () -> apply(t,
                "[" + op("schedule", "q1", "a", 1, "x") + "," + op("schedule", "q1", "a", 1, "y") + "]"));
        assertEquals("22023", dup.getSQLState());
    }

    @Test
    void claimedRowsAreTooLateAndClaimsAreDisjoint() throws Exception {
        UUID t = UUID.randomUUID();
        StringBuilder ops = new StringBuilder("[");
        for (int i = 0; i < 40; i++) {
            ops.append(i == 0 ? "" : ",").append(op("schedule", "qc", "k" + i, -1000, "t" + i));
        }
        apply(t, ops.append("]").toString());
        List<Claimed> first;
        List<Claimed> second;
        try (Connection a = db.connection(); Connection b = db.connection()) {
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            first = claim(a, 25).stream().filter(x -> x.tenant().equals(t)).toList();
            second = claim(b, 1000).stream().filter(x -> x.tenant().equals(t)).toList();
            a.commit();
            b.commit();
        }
        assertEquals(40, first.size() + second.size());
        assertTrue(first.stream().noneMatch(x -> second.stream().anyMatch(y -> y.key().equals(x.key()))));
        JsonNode r = apply(t, "[{\"op\":\"cancel\",\"queue\":\"qc\",\"timerKey\":\"k0\"}," + op("reschedule", "qc", "k1", 5, "z") + "]");
        assertEquals("too_late", r.get(0).get("status").asText());
        assertEquals("too_late", r.get(1).get("status").asText());
        try (Connection c = db.connection()) {
            assertTrue(claim(c, 1000).stream().noneMatch(x -> x.tenant().equals(t)), "claimed rows are invisible");
        }
    }

    @Test
    void holdSettleFailAndDlq() throws Exception {
        UUID t = UUID.randomUUID();
        apply(t, "[" + op("schedule", "qh", "a", -1, "ta") + "," + op("schedule", "qh", "b", -1, "tb") + "]");
        List<Claimed> mine;
        try (Connection c = db.connection()) {
            mine = claim(c, 1000).stream().filter(x -> x.tenant().equals(t)).toList();
        }
        assertEquals(2, mine.size());
        Claimed a = mine.stream().filter(x -> x.key().equals("a")).findFirst().orElseThrow();
        Claimed b = mine.stream().filter(x -> x.key().equals("b")).findFirst().orElseThrow();
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM queen.log_timers_hold_v1(?, ?, ?, ?)")) {
                ps.setObject(1, t);
                ps.setArray(2, c.createArrayOf("text", new Object[] {"qh", "qh"}));
                ps.setArray(3, c.createArrayOf("text", new Object[] {"a", "b"}));
                ps.setArray(4, c.createArrayOf("uuid", new Object[] {a.token(), UUID.randomUUID()}));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(1, rs.getInt(1), "a wrong token holds nothing");
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_settle_v1(?, ?, ?, ?)")) {
                ps.setObject(1, t);
                ps.setArray(2, c.createArrayOf("text", new Object[] {"qh"}));
                ps.setArray(3, c.createArrayOf("text", new Object[] {"a"}));
                ps.setArray(4, c.createArrayOf("boolean", new Object[] {true}));
                ps.execute();
            }
            c.commit();
        }
        // b fails permanently five times, then is archived.
        UUID token = b.token();
        for (int i = 1; i <= 5; i++) {
            try (Connection c = db.connection()) {
                if (i > 1) {
                    try (PreparedStatement ps = c.prepareStatement(
                            "UPDATE queen.log_timers SET claimed_until = now() + interval '30 s', claim_token = ?"
                                    + " WHERE tenant_id = ? AND queue = 'qh' AND timer_key = 'b'")) {
                        token = UUID.randomUUID();
                        ps.setObject(1, token);
                        ps.setObject(2, t);
                        ps.executeUpdate();
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(
                        "SELECT count(*) FROM queen.log_timers_fail_v1(?, ?, ?, ?, 0, 'boom', true, 5)")) {
                    ps.setObject(1, t);
                    ps.setArray(2, c.createArrayOf("text", new Object[] {"qh"}));
                    ps.setArray(3, c.createArrayOf("text", new Object[] {"b"}));
                    ps.setArray(4, c.createArrayOf("uuid", new Object[] {token}));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertEquals(i == 5 ? 1 : 0, rs.getInt(1), "exhausted after five");
                    }
                }
            }
        }
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_dlq_v1(?, 'qh', 'b', '{\"n\":1}'::jsonb, 5)")) {
            ps.setObject(1, t);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertTrue(rs.getBoolean(1));
            }
        }
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT (SELECT count(*) FROM queen.log_timers WHERE tenant_id = ?),"
                             + " (SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id"
                             + "   JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = ? AND d.consumer_group = '__timer__'"
                             + "   AND d.retry_count = 5 AND d.error = 'boom')")) {
            ps.setObject(1, t);
            ps.setObject(2, t);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(0, rs.getInt(1));
                assertEquals(1, rs.getInt(2));
            }
        }
    }

    @Test
    void getListCountAndQueueDelete() throws Exception {
        UUID t = UUID.randomUUID();
        StringBuilder ops = new StringBuilder("[");
        for (int i = 0; i < 5; i++) {
            ops.append(i == 0 ? "" : ",").append(op("schedule", "ql", "p:" + i, 60_000, "t" + i));
        }
        ops.append(",").append(op("schedule", "ql", "other", 60_000, "o")).append("]");
        apply(t, ops.toString());
        try (Connection c = db.connection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_get_v1(?, 'ql', 'p:1')::text")) {
                ps.setObject(1, t);
                JsonNode g = json(ps);
                assertTrue(g.get("found").asBoolean());
                assertEquals("t1", g.get("txn").asText());
                assertEquals("{\"n\":1}", new String(Base64.getDecoder().decode(g.get("payload").asText())));
                assertFalse(g.get("claimed").asBoolean());
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_list_v1(?, 'ql', NULL, 4)::text")) {
                ps.setObject(1, t);
                JsonNode page = json(ps);
                assertEquals(4, page.get("rows").size());
                assertTrue(page.get("truncated").asBoolean());
                assertEquals("p:2", page.get("nextAfter").asText());
                assertFalse(page.get("rows").get(0).has("payload"));
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_count_v1(?, 'ql', 'p:')::text")) {
                ps.setObject(1, t);
                assertEquals(5, json(ps).get("count").asInt());
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.delete_queue_v1('ql', ?)")) {
                ps.setObject(1, t);
                ps.execute();
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM queen.log_timers WHERE tenant_id = ?")) {
                ps.setObject(1, t);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(0, rs.getInt(1), "the queue delete removes its timers");
                }
            }
        }
    }
}
