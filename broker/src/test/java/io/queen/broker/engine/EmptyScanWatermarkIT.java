package io.queen.broker.engine;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The queue-level pop's candidate scan and its empty-scan watermark (004_log_pop): once a scan
 * found nothing and nothing is pending even under a lease, later scans read only partitions
 * written since; a lease or a seek never hides a message from them. Partitions are made old by
 * moving their {@code last_write_at} back, which is what ten idle minutes would do.
 */
class EmptyScanWatermarkIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("empty_scan_watermark");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void anEmptyScanNarrowsLaterScansToPartitionsWrittenSince() throws SQLException {
        int partitions = 600;
        pushOneToEach("wide", partitions);
        String drain = "/api/v1/pop/queue/wide?batch=1000&partitions=1000&wait=false&autoAck=true"
                + "&consumerGroup=g&subscriptionMode=all";
        assertEquals(partitions, drainCount(drain));
        UUID queue = age("wide");
        // The drain's last, empty pop moved the watermark already; start from none.
        assertTrue(watermarkMovedLately(queue, "g"));
        BrokerFixture.sql(db, "DELETE FROM queen.consumer_watermarks WHERE queue_id = '" + queue + "'");

        long full = partitionRowsReadByAnEmptyScan(queue, "g");
        assertTrue(full >= partitions, "the first empty scan reads every partition: " + full);
        assertTrue(watermarkMovedLately(queue, "g"), "nothing pending, so the watermark moved");
        long narrow = partitionRowsReadByAnEmptyScan(queue, "g");
        assertTrue(narrow < 10, "after the watermark only recent writes are read: " + narrow);

        // A write to an old partition brings it back into the window.
        assertEquals(201, http.push("wide", "p7", "{\"again\":true}").status());
        Reply pop = http.get(drain);
        assertEquals(200, pop.status(), pop.body());
        JsonNode messages = pop.json().get("messages");
        assertEquals(1, messages.size());
        assertEquals("p7", messages.get(0).get("partition").asText());
        assertEquals(204, http.get(drain).status());
    }

    @Test
    void aLeasedMessageKeepsTheWatermarkBackSoItsRedeliveryIsFound() throws SQLException {
        assertEquals(200, http.post("/api/v1/configure",
                "{\"queue\":\"leased\",\"options\":{\"leaseTime\":2}}").status());
        pushOneToEach("leased", 3);
        // p0's message is delivered under a 2 s lease and never acked; the others are consumed.
        Reply held = http.get("/api/v1/pop/queue/leased/partition/p0?batch=1&wait=false");
        assertEquals(200, held.status(), held.body());
        String heldTxn = held.json().get("messages").get(0).get("transactionId").asText();
        assertEquals(2, drainCount("/api/v1/pop/queue/leased?batch=10&partitions=10&wait=false&autoAck=true"));
        UUID queue = age("leased");

        // Nothing is claimable while the lease lives, but the lease-ignoring re-check sees p0 pending.
        assertEquals(204, http.get("/api/v1/pop/queue/leased?batch=10&wait=false").status());
        assertEquals(0L, number("SELECT count(*) FROM queen.consumer_watermarks WHERE queue_id = ?"
                + " AND last_empty_scan_at > 'epoch'", queue), "a leased span holds the watermark back");

        Reply again = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(250))
                .until(() -> http.get("/api/v1/pop/queue/leased?batch=10&wait=false"), r -> r.status() != 204);
        assertEquals(200, again.status(), "the expired lease's message is redelivered");
        assertEquals(heldTxn, again.json().get("messages").get(0).get("transactionId").asText());
    }

    @Test
    void aSeekBackAfterTheWatermarkMovedDeliversTheOldMessagesAgain() throws SQLException {
        pushOneToEach("replay", 20);
        String pop = "/api/v1/pop/queue/replay?batch=100&partitions=100&wait=false&autoAck=true"
                + "&consumerGroup=r&subscriptionMode=all";
        assertEquals(20, drainCount(pop));
        UUID queue = age("replay");
        assertEquals(204, http.get(pop).status());
        assertTrue(watermarkMovedLately(queue, "r"));

        Reply seek = http.post("/api/v1/consumer-groups/r/queues/replay/seek",
                "{\"timestamp\":\"2000-01-01T00:00:00Z\"}");
        assertEquals(200, seek.status(), seek.body());
        // The scan itself sees them (this broker's hot list was also told, by the seek's answer).
        assertEquals(20, candidates(queue, "r").size());
        assertEquals(20, drainCount(pop), "every partition's message again, though none was written lately");
    }

    @Test
    void anEmptyScanDoesNotMoveTheWatermarkWhileAResetHoldsTheGroupsLock() throws SQLException {
        pushOneToEach("guarded", 2);
        String pop = "/api/v1/pop/queue/guarded?batch=10&partitions=10&wait=false&autoAck=true"
                + "&consumerGroup=q&subscriptionMode=all";
        UUID queue;
        try (Connection reset = TestPostgres.connect(db)) {
            // A tenant-wide reset of group q in progress: it holds the group's key until it commits.
            reset.setAutoCommit(false);
            try (PreparedStatement ps = reset.prepareStatement(
                    "SELECT pg_advisory_xact_lock(queen.log_watermark_key_v1(NULL, 'q'))")) {
                ps.execute();
            }
            assertEquals(2, drainCount(pop)); // the pops neither wait nor fail
            queue = UUID.fromString(String.valueOf(scalar("SELECT id FROM queen.queues WHERE name = ?", "guarded")));
            assertEquals(0L, number("SELECT count(*) FROM queen.consumer_watermarks WHERE queue_id = ?", queue));
            reset.commit();
        }
        assertEquals(204, http.get(pop).status());
        assertTrue(watermarkMovedLately(queue, "q"));
    }

    @Test
    void anEmptyScanDoesNotWaitForAQueueDeleteInProgress() throws SQLException {
        pushOneToEach("doomed", 2);
        assertEquals(2, drainCount("/api/v1/pop/queue/doomed?batch=10&partitions=10&wait=false&autoAck=true"));
        UUID queue = UUID.fromString(String.valueOf(scalar("SELECT id FROM queen.queues WHERE name = ?", "doomed")));
        BrokerFixture.sql(db, "DELETE FROM queen.consumer_watermarks WHERE queue_id = '" + queue + "'");
        try (Connection deleting = TestPostgres.connect(db); Connection scanning = TestPostgres.connect(db)) {
            deleting.setAutoCommit(false);
            try (PreparedStatement ps = deleting.prepareStatement("DELETE FROM queen.queues WHERE id = ?")) {
                ps.setObject(1, queue);
                assertEquals(1, ps.executeUpdate());
            }
            try (PreparedStatement timeout = scanning.prepareStatement("SET statement_timeout = '3s'")) {
                timeout.execute();
            }
            // Waiting on the delete's row lock would end in the statement timeout, an exception here.
            try (PreparedStatement ps = scanning.prepareStatement(
                    "SELECT partition_name FROM queen.log_pop_candidates_v1(?, ?, 512)")) {
                assertTrue(names(ps, queue, "__QUEUE_MODE__").isEmpty());
            }
            deleting.rollback();
        }
        assertEquals(0L, number("SELECT count(*) FROM queen.consumer_watermarks WHERE queue_id = ?", queue),
                "it skipped the advance rather than waiting");
    }

    // ------------------------------------------------------------------ helpers

    static void pushOneToEach(String queue, int partitions) {
        StringBuilder body = new StringBuilder("{\"items\":[");
        for (int i = 0; i < partitions; i++) {
            body.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(queue).append("\",\"partition\":\"p")
                    .append(i).append("\",\"payload\":{\"i\":").append(i).append("}}");
        }
        Reply pushed = http.post("/api/v1/push", body.append("]}").toString());
        assertEquals(201, pushed.status(), pushed.body());
    }

    /** Pops until the route answers 204; returns the messages received. */
    static int drainCount(String route) {
        int received = 0;
        for (int round = 0; round < 1000; round++) {
            Reply r = http.get(route);
            if (r.status() == 204) {
                return received;
            }
            assertEquals(200, r.status(), r.body());
            received += r.json().get("messages").size();
        }
        throw new AssertionError("still messages after 1000 pops");
    }

    /** Makes every partition of the queue look idle for ten minutes; returns the queue id. */
    static UUID age(String queue) throws SQLException {
        BrokerFixture.sql(db, "UPDATE queen.log_partitions SET last_write_at = now() - interval '10 minutes'"
                + " WHERE queue_id = (SELECT id FROM queen.queues WHERE name = '" + queue + "')");
        BrokerFixture.sql(db, "ANALYZE queen.log_partitions");
        return UUID.fromString(String.valueOf(scalar("SELECT id FROM queen.queues WHERE name = ?", queue)));
    }

    static List<String> candidates(UUID queue, String group) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT partition_name FROM queen.log_pop_candidates_v1(?, ?, 512)")) {
            return names(ps, queue, group);
        }
    }

    static List<String> names(PreparedStatement ps, UUID queue, String group) throws SQLException {
        ps.setObject(1, queue);
        ps.setString(2, group);
        List<String> found = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                found.add(rs.getString(1));
            }
        }
        return found;
    }

    /**
     * Runs the candidate scan in a transaction of its own, checks it found nothing, and returns how
     * many queen.log_partitions rows it read (this transaction's counters, sequential and index).
     */
    static long partitionRowsReadByAnEmptyScan(UUID queue, String group) throws SQLException {
        try (Connection c = TestPostgres.connect(db)) {
            c.setAutoCommit(false);
            List<String> found;
            try (PreparedStatement ps = c.prepareStatement("SELECT partition_name FROM queen.log_pop_candidates_v1(?, ?, 512)")) {
                found = names(ps, queue, group);
            }
            assertTrue(found.isEmpty(), "nothing is pending: " + found);
            long read;
            try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0)"
                    + " FROM pg_stat_xact_user_tables WHERE schemaname = 'queen' AND relname = 'log_partitions'");
                 ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                read = rs.getLong(1);
            }
            c.commit();
            return read;
        }
    }

    static boolean watermarkMovedLately(UUID queue, String group) throws SQLException {
        return number("SELECT count(*) FROM queen.consumer_watermarks WHERE queue_id = ? AND consumer_group = '"
                + group + "' AND last_empty_scan_at > now() - interval '1 minute'", queue) == 1;
    }

    static long number(String sql, Object param) throws SQLException {
        return ((Number) scalar(sql, param)).longValue();
    }

    static Object scalar(String sql, Object param) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, param);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), sql);
                Object value = rs.getObject(1);
                assertFalse(rs.next(), sql);
                return value;
            }
        }
    }
}
