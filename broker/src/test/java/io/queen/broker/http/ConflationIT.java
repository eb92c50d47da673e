package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.DatabaseClock;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Conflation (broker/DESIGN.md, Pop path): a conflating group is served the newest message of each partition, and
 * acking it retires the partition's backlog for that group; the policy is the group's, fixed when
 * it registers, and every answer to a conflating pop says so, empty ones included.
 */
class ConflationIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("conflation");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Pushes n=from..to to one partition, one push (one segment) each. */
    static void pushEach(String queue, String partition, int from, int to) {
        for (int n = from; n <= to; n++) {
            http.push(queue, partition, "{\"n\":" + n + "}");
        }
    }

    static void configure(String queue, String options) {
        Reply r = http.post("/api/v1/configure", "{\"queue\":\"" + queue + "\",\"options\":" + options + "}");
        assertEquals(200, r.status(), r.body());
    }

    /** Pushes one message per transactionId to partition p, each in its own push (its own segment). */
    static void pushTransactions(String queue, String... txns) {
        for (String txn : txns) {
            Reply r = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + queue + "\",\"partition\":\"p\","
                    + "\"transactionId\":\"" + txn + "\",\"payload\":{\"txn\":\"" + txn + "\"}}]}");
            assertEquals(201, r.status(), r.body());
        }
    }

    /** A pop that subscribes a new group to everything retained (the broker's default is "new"). */
    static Reply pop(String path) {
        return http.get("/api/v1/pop/queue/" + path + (path.contains("?") ? "&" : "?") + "subscriptionMode=all");
    }

    static JsonNode popOk(String path) {
        Reply r = pop(path);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static Reply ack(JsonNode pop, int index, String status, String group) {
        JsonNode m = pop.get("messages").get(index);
        return http.post("/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + pop.get("leaseId").asText() + "\",\"status\":\"" + status + "\",\"consumerGroup\":\"" + group + "\"}");
    }

    static void assertAcked(Reply r) {
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get(0).get("success").asBoolean(), r.body());
    }

    /** committed, batch_end, lease_conflated, batch_retry_count, total_consumed of one cursor. */
    static List<Object> cursor(String queue, String partition, String group) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("""
                     SELECT c.committed, c.batch_end, c.lease_conflated, c.batch_retry_count, c.total_consumed
                     FROM queen.log_consumers c JOIN queen.log_partitions lp ON lp.id = c.partition_id
                     JOIN queen.queues q ON q.id = lp.queue_id
                     WHERE q.name = ? AND lp.name = ? AND c.consumer_group = ?""")) {
            ps.setString(1, queue);
            ps.setString(2, partition);
            ps.setString(3, group);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no cursor for " + queue + "/" + partition + "/" + group);
                List<Object> out = new ArrayList<>();
                for (int i = 1; i <= 5; i++) {
                    out.add(rs.getObject(i));
                }
                return out;
            }
        }
    }

    static int n(JsonNode message) {
        return message.get("data").get("n").asInt();
    }

    @Test
    void aConflatingGroupGetsTheNewestMessageAndItsAckRetiresTheBacklog() throws Exception {
        pushEach("tail", "p", 0, 4);
        http.push("tail", "p", "{\"n\":5}", "{\"n\":6}", "{\"n\":7}");
        JsonNode first = popOk("tail?consumerGroup=g&conflation=true&batch=10");
        assertEquals(1, first.get("messages").size(), first.toString());
        assertEquals(7, n(first.get("messages").get(0)));
        assertTrue(first.get("conflation").asBoolean(), first.toString());
        assertFalse(first.has("conflationConflict"), first.toString());
        assertEquals(Arrays.asList(-1L, 7L, true, 0, 0L), cursor("tail", "p", "g"));

        assertAcked(ack(first, 0, "completed", "g"));
        assertEquals(Arrays.asList(7L, null, false, 0, 8L), cursor("tail", "p", "g"),
                "the ack commits the whole span and counts the positions it retired");

        Reply empty = pop("tail?consumerGroup=g&conflation=true");
        assertEquals(200, empty.status(), "an empty conflating answer carries the echo, so it is not a 204");
        assertEquals(0, empty.json().get("messages").size());
        assertTrue(empty.json().get("conflation").asBoolean(), empty.body());

        JsonNode audit = popOk("tail?consumerGroup=audit&batch=100");
        assertEquals(8, audit.get("messages").size(), "another group on the queue reads everything");
        assertFalse(audit.has("conflation"), audit.toString());
    }

    @Test
    void eachPartitionGivesItsNewestMessageUpToTheBatch() {
        for (String p : List.of("a", "b", "c")) {
            pushEach("spread", p, 0, 2);
        }
        JsonNode r = popOk("spread?consumerGroup=g&conflation=true&batch=10");
        assertEquals(3, r.get("messages").size(), r.toString());
        assertEquals(3, r.get("partitionsClaimed").asInt());
        for (JsonNode m : r.get("messages")) {
            assertEquals(2, n(m), "the newest of partition " + m.get("partition").asText());
        }
        JsonNode capped = popOk("spread?consumerGroup=h&conflation=true&batch=10&partitions=2");
        assertEquals(2, capped.get("messages").size(), "partitions caps a conflating pop too");
    }

    @Test
    void theStoredPolicyWinsAndADisagreeingPopIsToldSo() {
        assertEquals(204, pop("policy?consumerGroup=plain").status(), "registers the group, without conflation");
        pushEach("policy", "p", 0, 2);
        assertEquals(1, popOk("policy?consumerGroup=cfl&conflation=true&leaseSeconds=1").get("messages").size());

        // Another group registered without conflation keeps getting everything, even when it asks.
        JsonNode plain = popOk("policy?consumerGroup=plain&conflation=true&batch=10");
        assertEquals(3, plain.get("messages").size(), plain.toString());
        assertTrue(plain.get("conflationConflict").asBoolean(), plain.toString());
        assertFalse(plain.has("conflation"), plain.toString());

        // A consumer of the conflating group that does not ask is served the group's way, silently.
        pushEach("policy", "q", 0, 2);
        JsonNode quiet = popOk("policy/partition/q?consumerGroup=cfl&batch=10");
        assertEquals(1, quiet.get("messages").size(), quiet.toString());
        assertEquals(2, n(quiet.get("messages").get(0)));
        assertTrue(quiet.get("conflation").asBoolean(), quiet.toString());
        assertFalse(quiet.has("conflationConflict"), quiet.toString());

        pushEach("policy", "r", 0, 2);
        JsonNode asked = popOk("policy/partition/r?consumerGroup=cfl&conflation=false&batch=10");
        assertEquals(1, asked.get("messages").size(), asked.toString());
        assertTrue(asked.get("conflation").asBoolean(), asked.toString());
        assertTrue(asked.get("conflationConflict").asBoolean(), asked.toString());
    }

    @Test
    void aPinnedConflatingPopRegistersTheGroupForItsOtherConsumers() {
        pushEach("pinned", "p", 0, 3);
        JsonNode r = popOk("pinned/partition/p?consumerGroup=pg&conflation=true");
        assertEquals(3, n(r.get("messages").get(0)));
        assertAcked(ack(r, 0, "completed", "pg"));
        pushEach("pinned", "other", 0, 3);
        JsonNode later = popOk("pinned?consumerGroup=pg&batch=10");
        assertEquals(1, later.get("messages").size(), later.toString());
        assertEquals(3, n(later.get("messages").get(0)));
        assertTrue(later.get("conflation").asBoolean(), later.toString());
    }

    @Test
    void aFailedAckKeepsTheCursorAndTheRedeliveryIsTheNewTail() throws Exception {
        pushEach("retry", "p", 0, 2);
        JsonNode first = popOk("retry?consumerGroup=g&conflation=true");
        assertEquals(2, n(first.get("messages").get(0)));
        assertEquals(1, first.get("messages").get(0).get("deliveryAttempt").asInt());
        assertAcked(ack(first, 0, "failed", "g"));
        assertEquals(Arrays.asList(-1L, null, false, 1, 0L), cursor("retry", "p", "g"));

        pushEach("retry", "p", 3, 3);
        JsonNode second = popOk("retry?consumerGroup=g&conflation=true");
        assertEquals(3, n(second.get("messages").get(0)), "the newest message since, not the failed one");
        assertEquals(2, second.get("messages").get(0).get("deliveryAttempt").asInt(),
                "the same backlog delivered again counts as a second attempt");
        assertAcked(ack(second, 0, "completed", "g"));
        assertEquals(Arrays.asList(3L, null, false, 0, 4L), cursor("retry", "p", "g"));
    }

    @Test
    void delayedMessagesAreNeitherDeliveredNorSkipped() throws Exception {
        configure("delayed", "{\"delayedProcessing\":2}");
        pushEach("delayed", "p", 0, 2);
        Reply none = pop("delayed?consumerGroup=g&conflation=true");
        assertEquals(200, none.status());
        assertEquals(0, none.json().get("messages").size(), none.body());
        assertEquals(-1L, cursor("delayed", "p", "g").get(0), "nothing visible is no reason to move the cursor");

        DatabaseClock.awaitNewestSegmentOlderThan(db, "delayed", Duration.ofSeconds(2));
        pushEach("delayed", "p", 3, 4);
        JsonNode r = popOk("delayed?consumerGroup=g&conflation=true");
        assertEquals(2, n(r.get("messages").get(0)), "the newest visible message, not the newest pushed");
        assertAcked(ack(r, 0, "completed", "g"));
        assertEquals(2L, cursor("delayed", "p", "g").get(0), "the still-delayed messages stay ahead of the cursor");
    }

    @Test
    void aRepeatedTransactionIdStillRetiresTheWholeSpan() throws Exception {
        configure("repeat", "{\"dedupWindowSeconds\":0}");
        pushTransactions("repeat", "same", "other", "same");
        // In one statement (the usual ack) ...
        JsonNode first = popOk("repeat?consumerGroup=g&conflation=true");
        assertAcked(ack(first, 0, "completed", "g"));
        assertEquals(Arrays.asList(2L, null, false, 0, 3L), cursor("repeat", "p", "g"));

        // ... and through the general resolver, which a transaction's ack takes.
        pushTransactions("repeat", "same", "other", "same");
        JsonNode second = popOk("repeat?consumerGroup=g&conflation=true");
        JsonNode m = second.get("messages").get(0);
        Reply tx = http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"ack\",\"transactionId\":\"same\","
                + "\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + second.get("leaseId").asText() + "\",\"consumerGroup\":\"g\",\"status\":\"completed\"},"
                + "{\"type\":\"push\",\"queue\":\"repeat_out\",\"payload\":{\"done\":true}}]}");
        assertEquals(200, tx.status(), tx.body());
        assertTrue(tx.json().get("success").asBoolean(), tx.body());
        assertEquals(Arrays.asList(5L, null, false, 0, 6L), cursor("repeat", "p", "g"),
                "the cursor lands on the delivered tail, not on the first occurrence of its transactionId");
    }

    @Test
    void aDeadLetteredTailRetiresTheBacklogBehindIt() throws Exception {
        configure("poison", "{\"retryLimit\":0}");
        pushEach("poison", "p", 0, 4);
        JsonNode r = popOk("poison?consumerGroup=g&conflation=true");
        assertEquals(4, n(r.get("messages").get(0)));
        Reply nack = ack(r, 0, "failed", "g");
        assertTrue(nack.json().get(0).get("dlq").asBoolean(), nack.body());
        assertEquals(Arrays.asList(4L, null, false, 0, 5L), cursor("poison", "p", "g"));
        JsonNode dlq = http.get("/api/v1/dlq?queue=poison&consumerGroup=g").json();
        assertEquals(1, dlq.get("messages").size(), dlq.toString());
        assertEquals(4, dlq.get("messages").get(0).get("data").get("n").asInt(), dlq.toString());
    }

    @Test
    void concurrentConsumersOfAConflatingGroupNeverHoldTheSamePartition() throws Exception {
        for (int p = 0; p < 40; p++) {
            http.push("crowd", "p" + p, "{\"n\":0}", "{\"n\":1}");
        }
        List<java.util.concurrent.CompletableFuture<JsonNode>> pops = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            pops.add(java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> popOk("crowd?consumerGroup=g&conflation=true&batch=10")));
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        int delivered = 0;
        for (var f : pops) {
            for (JsonNode m : f.get(30, java.util.concurrent.TimeUnit.SECONDS).get("messages")) {
                assertTrue(seen.add(m.get("partition").asText()), "partition delivered twice under live leases: "
                        + m.get("partition").asText());
                assertEquals(1, n(m));
                delivered++;
            }
        }
        assertEquals(40, delivered + popOk("crowd?consumerGroup=g&conflation=true&batch=64").get("messages").size(),
                "every partition once, by one consumer or the last pop");
    }

    /** A broker of the build before conflation, still serving during a rolling restart, calls the old arities. */
    @Test
    void theCallsOfTheBuildBeforeConflationStillWork() throws Exception {
        pushEach("older", "p", 0, 2);
        try (Connection c = TestPostgres.connect(db)) {
            String pid;
            String qid;
            try (PreparedStatement ps = c.prepareStatement("SELECT lp.id, lp.queue_id FROM queen.log_partitions lp"
                    + " JOIN queen.queues q ON q.id = lp.queue_id WHERE q.name = 'older'");
                 ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                pid = rs.getString(1);
                qid = rs.getString(2);
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_register_group_v1("
                    + "'00000000-0000-0000-0000-000000000001'::uuid, ?::uuid, 'old', 'all', NULL)")) {
                ps.setString(1, qid);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertFalse(rs.getBoolean(1), "registered without conflation");
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT sum(take) FROM queen.log_pop_v1(?::uuid, 'old', 10, 0, 'w', false, 'all', NULL)")) {
                ps.setString(1, pid);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(3, rs.getInt(1), "a plain claim of the whole partition");
                }
            }
        }
    }

    @Test
    void conflationWithoutAGroupOrWithAutoAckIsRefused() {
        Reply noGroup = pop("refused?conflation=true");
        assertEquals(400, noGroup.status());
        assertEquals(PopHttpService.CONFLATION_NEEDS_GROUP, noGroup.json().get("error").asText());
        assertEquals(0, noGroup.json().get("messages").size());
        Reply autoAck = pop("refused?conflation=true&consumerGroup=g&autoAck=true");
        assertEquals(400, autoAck.status());
        assertEquals(PopHttpService.CONFLATION_WITH_AUTO_ACK, autoAck.json().get("error").asText());
        Reply discovery = http.get("/api/v1/pop?namespace=ns&conflation=true");
        assertEquals(400, discovery.status());
        Reply badValue = pop("refused?conflation=maybe&consumerGroup=g");
        assertEquals(400, badValue.status(), badValue.body());
        assertNull(badValue.json().get("messages"), "a malformed parameter is the generic 400");
    }
}
