package io.queen.broker.engine;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.store.Database;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ack after a pop (all completed, under the pop's lease, in delivery order) is written by one
 * statement, log_ack_completed_v1; every other ack takes the general path. Both must leave the
 * cursor and lease exactly as AckDecision says. Messages are pushed and popped over HTTP on a real
 * broker; the acks go through an AckService of the test's own, whose counter shows the path taken.
 */
class OneStatementAckIT {
    private static final String GROUP = Tenants.QUEUE_MODE;
    private static Broker broker;
    private static DatabaseSettings db;
    private static Database database;
    private static HttpProbe http;
    private static final List<String> woken = new CopyOnWriteArrayList<>();
    private static AckService acks;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("one_statement_ack");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
        database = Database.open(db);
        acks = new AckService(database, (tenant, queue, partition) -> woken.add(queue + "/" + partition));
    }

    @AfterAll
    static void stop() {
        if (database != null) {
            database.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    /** A leased batch: its lease id, partition id and transaction ids in delivery order. */
    private record Batch(String leaseId, UUID partitionId, List<String> txns) {
    }

    private static Batch pushAndPop(String queue, int push, int pop) {
        String[] payloads = new String[push];
        for (int i = 0; i < push; i++) {
            payloads[i] = "{\"i\":" + i + "}";
        }
        assertEquals(201, http.push(queue, "p", payloads).status());
        HttpProbe.Reply r = http.get("/api/v1/pop/queue/" + queue + "/partition/p?batch=" + pop);
        assertEquals(200, r.status(), r.body());
        JsonNode messages = r.json().get("messages");
        List<String> txns = new ArrayList<>();
        messages.forEach(m -> txns.add(m.get("transactionId").asText()));
        assertEquals(pop, txns.size());
        return new Batch(messages.get(0).get("leaseId").asText(),
                UUID.fromString(messages.get(0).get("partitionId").asText()), txns);
    }

    private static List<AckService.Item> items(Batch b, List<String> txns, AckDecision.Status status, String lease) {
        return txns.stream().map(t -> new AckService.Item(t, b.partitionId(), status, lease, null)).toList();
    }

    /** committed, worker_id and batch_retry_count of the queue-mode cursor. */
    private static Object[] cursor(UUID partition) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT committed, worker_id, batch_retry_count "
                     + "FROM queen.log_consumers WHERE partition_id = ? AND consumer_group = ?")) {
            ps.setObject(1, partition);
            ps.setString(2, GROUP);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return new Object[] {rs.getLong(1), rs.getString(2), rs.getInt(3)};
            }
        }
    }

    @Test
    void anInOrderAckIsOneStatementAndReleasesTheLeaseAtTheBatchEnd() throws SQLException {
        Batch b = pushAndPop("one_stmt_in_order", 5, 5);
        long before = acks.oneStatementAcks();

        List<AckService.Result> head = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, b.txns().subList(0, 3), AckDecision.Status.COMPLETED, b.leaseId()));
        assertEquals(before + 1, acks.oneStatementAcks());
        head.forEach(r -> assertTrue(r.success() && !r.leaseReleased() && !r.noop() && r.error() == null, r.toString()));
        Object[] mid = cursor(b.partitionId());
        assertEquals(2L, mid[0]);
        assertEquals(b.leaseId(), mid[1], "the lease holds until its batch end is acked");

        List<AckService.Result> tail = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, b.txns().subList(3, 5), AckDecision.Status.COMPLETED, b.leaseId()));
        assertEquals(before + 2, acks.oneStatementAcks());
        tail.forEach(r -> assertTrue(r.success() && r.leaseReleased(), r.toString()));
        Object[] end = cursor(b.partitionId());
        assertEquals(4L, end[0]);
        assertNull(end[1]);
        assertEquals(0, end[2]);
    }

    @Test
    void releasingWithMessagesBehindTheCursorWakesPops() throws SQLException {
        Batch b = pushAndPop("one_stmt_more", 4, 2);
        woken.clear();
        List<AckService.Result> r = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, b.txns(), AckDecision.Status.COMPLETED, b.leaseId()));
        assertTrue(r.get(0).leaseReleased());
        assertEquals(List.of("one_stmt_more/p"), woken);
    }

    @Test
    void outOfOrderAnotherLeaseOrAFailureTakeTheGeneralPath() throws SQLException {
        Batch b = pushAndPop("one_stmt_general", 3, 3);
        long before = acks.oneStatementAcks();

        List<AckService.Result> foreign = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, b.txns(), AckDecision.Status.COMPLETED, UUID.randomUUID().toString()));
        foreign.forEach(r -> assertEquals(AckOutcome.INVALID_LEASE, r.outcome()));
        assertEquals(-1L, cursor(b.partitionId())[0], "a refused ack writes nothing");

        List<AckService.Result> reversed = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, List.of(b.txns().get(1), b.txns().get(0)), AckDecision.Status.COMPLETED, b.leaseId()));
        reversed.forEach(r -> assertTrue(r.success(), r.toString()));
        assertEquals(1L, cursor(b.partitionId())[0]);

        List<AckService.Result> failed = acks.ack(Tenants.DEFAULT, GROUP,
                items(b, List.of(b.txns().get(2)), AckDecision.Status.FAILED, b.leaseId()));
        assertTrue(failed.get(0).success());
        Object[] after = cursor(b.partitionId());
        assertEquals(1L, after[0], "a failure does not move the cursor");
        assertEquals(1, after[2], "it charges the retry budget");
        assertFalse(after[1] != null, "and ends the lease");
        assertEquals(before, acks.oneStatementAcks(), "none of these is the one-statement ack");
    }
}
