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
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The message path over real HTTP on a real PostgreSQL: shapes, semantics and bad input. */
class MessagePathIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("message_path");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply push(String queue, String partition, String... payloads) {
        return http.push(queue, partition, payloads);
    }

    static Reply ack(String txn, String partitionId, String leaseId, String status, String group) {
        return http.post("/api/v1/ack", "{\"transactionId\":\"" + txn + "\",\"partitionId\":\"" + partitionId
                + "\",\"leaseId\":\"" + leaseId + "\",\"status\":\"" + status + "\""
                + (group == null ? "" : ",\"consumerGroup\":\"" + group + "\"") + "}");
    }

    static void ackAll(JsonNode pop, String group) {
        StringBuilder acks = new StringBuilder();
        for (JsonNode m : pop.get("messages")) {
            if (!acks.isEmpty()) {
                acks.append(',');
            }
            acks.append("{\"transactionId\":\"").append(m.get("transactionId").asText()).append("\",\"partitionId\":\"")
                    .append(m.get("partitionId").asText()).append("\",\"leaseId\":\"").append(m.get("leaseId").asText())
                    .append("\"}");
        }
        Reply r = http.post("/api/v1/ack/batch", "{" + (group == null ? "" : "\"consumerGroup\":\"" + group + "\",")
                + "\"acknowledgments\":[" + acks + "]}");
        assertEquals(200, r.status(), r.body());
        for (JsonNode res : r.json()) {
            assertTrue(res.get("success").asBoolean(), r.body());
        }
    }

    @Test
    void pushPopAckRoundTripHasTheReferenceShapes() {
        Reply pushed = http.post("/api/v1/push",
                "{\"items\":[{\"queue\":\"shapes\",\"payload\":{\"n\":1}},{\"queue\":\"shapes\",\"payload\":null,\"transactionId\":\"t-2\"}]}");
        assertEquals(201, pushed.status());
        JsonNode first = pushed.json().get(0);
        assertEquals(0, first.get("index").asInt());
        assertEquals("queued", first.get("status").asText());
        assertEquals("shapes", first.get("queueName").asText());
        assertEquals(first.get("message_id").asText(), first.get("transaction_id").asText(),
                "the default transactionId is the minted message id");
        assertEquals("t-2", pushed.json().get(1).get("transaction_id").asText());

        Reply popped = http.get("/api/v1/pop/queue/shapes?batch=10");
        assertEquals(200, popped.status(), popped.body());
        JsonNode body = popped.json();
        assertTrue(body.get("success").asBoolean());
        assertEquals("shapes", body.get("queue").asText());
        assertEquals("Default", body.get("partition").asText());
        assertEquals("__QUEUE_MODE__", body.get("consumerGroup").asText());
        assertEquals(1, body.get("partitionsClaimed").asInt());
        List<String> keys = new ArrayList<>();
        body.fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("success", "queue", "partition", "partitionId", "leaseId", "consumerGroup", "messages",
                "partitionsClaimed"), keys);
        JsonNode m0 = body.get("messages").get(0);
        List<String> mkeys = new ArrayList<>();
        m0.fieldNames().forEachRemaining(mkeys::add);
        assertEquals(List.of("id", "transactionId", "traceId", "data", "producerSub", "createdAt", "partitionId",
                "partition", "leaseId", "consumerGroup", "deliveryAttempt"), mkeys);
        assertEquals(1, m0.get("data").get("n").asInt());
        assertTrue(m0.get("traceId").isNull());
        assertTrue(m0.get("createdAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));
        assertTrue(body.get("messages").get(1).get("data").isNull());
        assertEquals(first.get("message_id").asText(), m0.get("id").asText());

        Reply acked = ack(m0.get("transactionId").asText(), m0.get("partitionId").asText(), body.get("leaseId").asText(),
                "completed", null);
        assertEquals(200, acked.status());
        JsonNode a = acked.json().get(0);
        List<String> akeys = new ArrayList<>();
        a.fieldNames().forEachRemaining(akeys::add);
        assertEquals(List.of("index", "transactionId", "success", "error", "leaseReleased", "dlq", "noop"), akeys);
        assertTrue(a.get("success").asBoolean());
        assertFalse(a.get("leaseReleased").asBoolean(), "one of two acked: the lease is kept (partial ack)");
        Reply second = ack("t-2", m0.get("partitionId").asText(), body.get("leaseId").asText(), "completed", null);
        assertTrue(second.json().get(0).get("leaseReleased").asBoolean());
        assertEquals(204, http.get("/api/v1/pop/queue/shapes").status());
        assertEquals("", http.get("/api/v1/pop/queue/shapes").body());
    }

    @Test
    void aPayloadIsDeliveredExactlyAsItWasPushed() {
        String payload = "{\"amount\": 0.10000000000000000001, \"big\": 12345678901234567890123}";
        assertEquals(201, http.post("/api/v1/push", "{\"items\":[{\"queue\":\"verbatim\",\"payload\":" + payload + "}]}").status());
        Reply r = http.get("/api/v1/pop/queue/verbatim");
        assertTrue(r.body().contains("\"data\":" + payload), r.body());
    }

    @Test
    void badInputIsA400WithAJsonErrorAndWritesNothing() throws Exception {
        Reply notJson = http.post("/api/v1/push", "{not json");
        assertEquals(400, notJson.status());
        assertTrue(notJson.json().get("error").asText().startsWith("bad body"));
        assertEquals(400, http.post("/api/v1/push", "{\"items\":[{\"queue\":\"bad_q\",\"payload\":1},{\"payload\":2}]}").status());
        assertEquals(400, http.post("/api/v1/push", "{\"items\":[{\"queue\":\"bad_q\"}]}").status());
        assertEquals(400, http.post("/api/v1/push", "{\"nothing\":true}").status());
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.queues WHERE name = 'bad_q'")) {
            rs.next();
            assertEquals(0, rs.getInt(1), "a rejected request writes nothing, not even the valid items");
        }
        Reply badUuid = http.post("/api/v1/ack", "{\"transactionId\":\"x\",\"partitionId\":\"not-a-uuid\"}");
        assertEquals(400, badUuid.status());
        assertTrue(badUuid.json().get("error").asText().contains("not a UUID"));
        Reply negative = http.get("/api/v1/pop/queue/bad_q?batch=-1");
        assertEquals(400, negative.status());
        assertTrue(negative.json().has("error"));
        assertEquals(400, http.get("/api/v1/pop/queue/bad_q?wait=perhaps").status());
        assertEquals(400, http.get("/api/v1/pop").status());
        assertEquals(400, http.post("/api/v1/ack/batch", "{\"acks\":[]}").status());
    }

    @Test
    void anAckForAnUnknownConsumerGroupFailsPerItem() {
        push("unknown_group", "p", "1");
        JsonNode pop = http.get("/api/v1/pop/queue/unknown_group").json();
        JsonNode m = pop.get("messages").get(0);
        Reply r = ack(m.get("transactionId").asText(), m.get("partitionId").asText(), "", "completed", "no-such-group");
        assertEquals(200, r.status());
        assertFalse(r.json().get(0).get("success").asBoolean());
        assertEquals("consumer not found", r.json().get(0).get("error").asText());
    }

    @Test
    void messagesOfOnePartitionArriveInPushOrder() {
        for (int batch = 0; batch < 5; batch++) {
            String[] payloads = new String[10];
            for (int i = 0; i < 10; i++) {
                payloads[i] = String.valueOf(batch * 10 + i);
            }
            push("fifo", "only", payloads);
        }
        List<Integer> seen = new ArrayList<>();
        while (true) {
            Reply r = http.get("/api/v1/pop/queue/fifo/partition/only?batch=7");
            if (r.status() == 204) {
                break;
            }
            for (JsonNode m : r.json().get("messages")) {
                seen.add(m.get("data").asInt());
            }
            ackAll(r.json(), null);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add(i);
        }
        assertEquals(expected, seen);
    }

    @Test
    void aLeasedPartitionDoesNotHoldBackAnother() {
        push("independent", "stuck", "1");
        push("independent", "free", "2");
        Reply firstPop = http.get("/api/v1/pop/queue/independent/partition/stuck");
        assertEquals(200, firstPop.status());
        Reply other = http.get("/api/v1/pop/queue/independent");
        assertEquals(200, other.status(), "the other partition is served while 'stuck' is leased");
        assertEquals("free", other.json().get("partition").asText());
        assertEquals(204, http.get("/api/v1/pop/queue/independent").status());
    }

    @Test
    void concurrentConsumersNeverReceiveTheSameMessageInsideOneLease() throws Exception {
        int partitions = 8;
        int perPartition = 25;
        for (int p = 0; p < partitions; p++) {
            String[] payloads = new String[perPartition];
            for (int i = 0; i < perPartition; i++) {
                payloads[i] = "\"p" + p + "-" + i + "\"";
            }
            push("contended", "p" + p, payloads);
        }
        Set<String> delivered = ConcurrentHashMap.newKeySet();
        List<String> duplicates = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<CompletableFuture<Void>> consumers = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            consumers.add(CompletableFuture.runAsync(() -> {
                int empty = 0;
                while (empty < 3) {
                    Reply r = http.get("/api/v1/pop/queue/contended?batch=7&leaseSeconds=60");
                    if (r.status() == 204) {
                        empty++;
                        continue;
                    }
                    for (JsonNode m : r.json().get("messages")) {
                        if (!delivered.add(m.get("data").asText())) {
                            duplicates.add(m.get("data").asText());
                        }
                    }
                    ackAll(r.json(), null);
                }
            }, pool));
        }
        CompletableFuture.allOf(consumers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        pool.shutdown();
        assertEquals(List.of(), duplicates);
        assertEquals(partitions * perPartition, delivered.size());
    }

    @Test
    void anExpiredLeaseRedeliversWithTheNextAttemptNumber() throws Exception {
        push("expiry", "p", "\"a\"", "\"b\"");
        JsonNode first = http.get("/api/v1/pop/queue/expiry?leaseSeconds=1").json();
        assertEquals(1, first.get("messages").get(0).get("deliveryAttempt").asInt());
        assertEquals(204, http.get("/api/v1/pop/queue/expiry").status(), "leased: nothing to hand out");
        DatabaseClock.awaitLeaseExpired(db, first.get("leaseId").asText());
        Reply again = http.get("/api/v1/pop/queue/expiry");
        assertEquals(200, again.status());
        assertEquals("a", again.json().get("messages").get(0).get("data").asText());
        assertEquals(2, again.json().get("messages").get(0).get("deliveryAttempt").asInt());
        assertNotEquals(first.get("leaseId").asText(), again.json().get("leaseId").asText());
        // An ack carrying the expired lease fails; the new holder's succeeds.
        JsonNode m = again.json().get("messages").get(0);
        Reply stale = ack("a-missing", m.get("partitionId").asText(), first.get("leaseId").asText(), "completed", null);
        assertEquals("invalid or expired lease", stale.json().get(0).get("error").asText());
        ackAll(again.json(), null);
    }

    @Test
    void failedAcksSpendTheRetryBudgetThenDeadLetter() throws Exception {
        push("retrying", "p", "{\"job\":1}", "{\"job\":2}");
        BrokerFixture.sql(db, "UPDATE queen.queues SET retry_limit = 1 WHERE name = 'retrying'");
        JsonNode p1 = http.get("/api/v1/pop/queue/retrying?batch=1").json();
        JsonNode m = p1.get("messages").get(0);
        Reply nack1 = ack(m.get("transactionId").asText(), m.get("partitionId").asText(), p1.get("leaseId").asText(),
                "failed", null);
        assertTrue(nack1.json().get(0).get("success").asBoolean());
        assertFalse(nack1.json().get(0).get("dlq").asBoolean());
        assertTrue(nack1.json().get(0).get("leaseReleased").asBoolean());

        JsonNode p2 = http.get("/api/v1/pop/queue/retrying?batch=1").json();
        JsonNode again = p2.get("messages").get(0);
        assertEquals(m.get("id").asText(), again.get("id").asText(), "a nacked message is redelivered at once");
        assertEquals(2, again.get("deliveryAttempt").asInt());
        Reply nack2 = http.post("/api/v1/ack", "{\"transactionId\":\"" + again.get("transactionId").asText()
                + "\",\"partitionId\":\"" + again.get("partitionId").asText() + "\",\"leaseId\":\""
                + p2.get("leaseId").asText() + "\",\"status\":\"failed\",\"error\":\"boom\"}");
        assertTrue(nack2.json().get(0).get("dlq").asBoolean(), nack2.body());
        assertTrue(nack2.json().get(0).get("leaseReleased").asBoolean());

        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT error, payload::text, transaction_id, message_id::text, retry_count"
                     + " FROM queen.log_dlq WHERE transaction_id = '" + m.get("transactionId").asText() + "'")) {
            assertTrue(rs.next(), "the dead letter row exists");
            assertEquals("boom", rs.getString(1));
            assertEquals("{\"job\": 1}", rs.getString(2));
            assertEquals(m.get("id").asText(), rs.getString(4));
            assertEquals(1, rs.getInt(5));
        }
        JsonNode next = http.get("/api/v1/pop/queue/retrying").json();
        assertEquals(2, next.get("messages").get(0).get("data").get("job").asInt(), "the partition moved on");
        assertEquals(1, next.get("messages").get(0).get("deliveryAttempt").asInt());
    }

    @Test
    void aRetryStatusRedeliversWithoutSpendingTheBudget() {
        push("retry_status", "p", "1");
        BrokerFixture.sql(db, "UPDATE queen.queues SET retry_limit = 0 WHERE name = 'retry_status'");
        for (int i = 0; i < 3; i++) {
            JsonNode p = http.get("/api/v1/pop/queue/retry_status").json();
            JsonNode m = p.get("messages").get(0);
            Reply r = ack(m.get("transactionId").asText(), m.get("partitionId").asText(), p.get("leaseId").asText(),
                    "retry", null);
            assertFalse(r.json().get(0).get("dlq").asBoolean());
        }
        assertEquals(200, http.get("/api/v1/pop/queue/retry_status").status());
    }

    @Test
    void aTransactionIdIsDeduplicatedInsideTheWindowOnly() throws Exception {
        Reply a = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"dedup\",\"payload\":1,\"transactionId\":\"order-1\"}]}");
        Reply b = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"dedup\",\"payload\":2,\"transactionId\":\"order-2\"},"
                + "{\"queue\":\"dedup\",\"payload\":1,\"transactionId\":\"order-1\"},"
                + "{\"queue\":\"dedup\",\"payload\":3,\"transactionId\":\"order-2\"}]}");
        assertEquals("queued", b.json().get(0).get("status").asText());
        assertEquals("duplicate", b.json().get(1).get("status").asText());
        assertEquals(a.json().get(0).get("message_id").asText(), b.json().get(1).get("message_id").asText(),
                "a duplicate reports the original message id");
        assertEquals("duplicate", b.json().get(2).get("status").asText(), "repeated inside one request");
        assertEquals(b.json().get(0).get("message_id").asText(), b.json().get(2).get("message_id").asText());

        Reply otherPartition = http.post("/api/v1/push",
                "{\"items\":[{\"queue\":\"dedup\",\"partition\":\"other\",\"payload\":1,\"transactionId\":\"order-1\"}]}");
        assertEquals("queued", otherPartition.json().get(0).get("status").asText(), "dedup is per partition");

        Reply configured = http.post("/api/v1/configure", "{\"queue\":\"dedup\",\"options\":{\"dedupWindowSeconds\":1}}");
        assertEquals(200, configured.status(), configured.body());
        DatabaseClock.awaitNewestSegmentOlderThan(db, "dedup", Duration.ofSeconds(1));
        Reply late = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"dedup\",\"payload\":1,\"transactionId\":\"order-1\"}]}");
        assertEquals("queued", late.json().get(0).get("status").asText(), "beyond the window it is new");
    }

    @Test
    void everyConsumerGroupReceivesEveryMessage() {
        push("fanout", "p", "1", "2", "3");
        for (String group : List.of("billing", "audit")) {
            Reply r = http.get("/api/v1/pop/queue/fanout?consumerGroup=" + group + "&subscriptionMode=all&batch=10");
            assertEquals(200, r.status(), group);
            assertEquals(3, r.json().get("messages").size(), group);
            assertEquals(group, r.json().get("consumerGroup").asText());
            ackAll(r.json(), group);
        }
        assertEquals(200, http.get("/api/v1/pop/queue/fanout?batch=10").status(), "queue mode is its own cursor");
    }

    @Test
    void subscriptionModeNewSkipsWhatWasPushedBefore() {
        push("sub_new", "p", "\"old\"");
        assertEquals(204, http.get("/api/v1/pop/queue/sub_new?consumerGroup=fresh").status(),
                "the default mode for a named group is new");
        push("sub_new", "p", "\"recent\"");
        Reply r = http.get("/api/v1/pop/queue/sub_new?consumerGroup=fresh");
        assertEquals(200, r.status());
        assertEquals("recent", r.json().get("messages").get(0).get("data").asText());
        Reply all = http.get("/api/v1/pop/queue/sub_new?consumerGroup=history&subscriptionMode=all&batch=10");
        assertEquals(2, all.json().get("messages").size());
    }

    @Test
    void autoAckCommitsAtOnceWithAnEmptyLeaseId() {
        push("auto", "p", "1", "2");
        Reply r = http.get("/api/v1/pop/queue/auto?autoAck=true&batch=10");
        assertEquals("", r.json().get("leaseId").asText());
        assertEquals(204, http.get("/api/v1/pop/queue/auto").status());
    }

    @Test
    void aLeaseCanBeExtended() {
        push("extend", "p", "1");
        JsonNode p = http.get("/api/v1/pop/queue/extend?leaseSeconds=5").json();
        Reply r = http.post("/api/v1/lease/" + p.get("leaseId").asText() + "/extend", "{\"seconds\":120}");
        assertEquals(200, r.status());
        assertTrue(r.json().get("success").asBoolean());
        assertEquals(1, r.json().get("renewed").asInt());
        assertEquals(r.json().get("expiresAt").asText(), r.json().get("lease_expires_at").asText());
        Reply unknown = http.post("/api/v1/lease/nope/extend", "");
        assertEquals(200, unknown.status());
        assertFalse(unknown.json().get("success").asBoolean());
        assertTrue(unknown.json().get("newExpiresAt").isNull());
    }

    @Test
    void aParkedPopWakesWhenAPushCommits() throws Exception {
        CompletableFuture<Reply> parked = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/longpoll?wait=true&timeout=20000"));
        await("an empty queue: the pop stays parked").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> !parked.isDone());
        long start = System.nanoTime();
        push("longpoll", "p", "\"wake\"");
        Reply r = parked.get(20, TimeUnit.SECONDS);
        assertEquals(200, r.status());
        assertTrue((System.nanoTime() - start) / 1_000_000 < 5_000, "woken by the push, not by the timeout");
        assertEquals(204, http.get("/api/v1/pop/queue/longpoll_empty?wait=true&timeout=300").status());
    }

    @Test
    void aParkedPopOfEveryGroupReceivesThePush() throws Exception {
        // A commit wakes one parked pop per consumer group: both groups must get the message.
        CompletableFuture<Reply> g1 = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/wake-groups?wait=true&timeout=20000&consumerGroup=g1"));
        CompletableFuture<Reply> g2 = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/wake-groups?wait=true&timeout=20000&consumerGroup=g2"));
        await("an empty queue: both pops stay parked").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> !g1.isDone() && !g2.isDone());
        push("wake-groups", "p", "\"both\"");
        for (CompletableFuture<Reply> parked : List.of(g1, g2)) {
            Reply r = parked.get(20, TimeUnit.SECONDS);
            assertEquals(200, r.status(), r.body());
            assertEquals("both", r.json().get("messages").get(0).get("data").asText());
        }
    }

    @Test
    void whatWasPushedWhileThePartitionWasLeasedReachesAParkedPopOnceTheLeaseIsReleased() throws Exception {
        push("leased-wake", "p", "\"first\"");
        JsonNode held = http.get("/api/v1/pop/queue/leased-wake").json();
        CompletableFuture<Reply> parked = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/leased-wake?wait=true&timeout=20000"));
        await("the only partition is leased: the pop stays parked").during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(5)).until(() -> !parked.isDone());
        push("leased-wake", "p", "\"second\"");
        await("the partition is leased: nothing to hand out yet, the push's wake notwithstanding")
                .during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !parked.isDone());
        ackAll(held, null);
        Reply r = parked.get(20, TimeUnit.SECONDS);
        assertEquals(200, r.status(), r.body());
        assertEquals("second", r.json().get("messages").get(0).get("data").asText());
        ackAll(r.json(), null);
    }

    @Test
    void aParkedPopPicksUpAnExpiredLeasesRedeliveryWithoutAnyPush() throws Exception {
        push("expiry-longpoll", "p", "\"again\"");
        JsonNode first = http.get("/api/v1/pop/queue/expiry-longpoll?leaseSeconds=1").json();
        assertEquals(1, first.get("messages").get(0).get("deliveryAttempt").asInt());
        // Nothing marks this partition again: the parked pop's periodic re-check must find it.
        Reply r = http.get("/api/v1/pop/queue/expiry-longpoll?wait=true&timeout=15000");
        assertEquals(200, r.status(), r.body());
        assertEquals("again", r.json().get("messages").get(0).get("data").asText());
        assertEquals(2, r.json().get("messages").get(0).get("deliveryAttempt").asInt());
        ackAll(r.json(), null);
    }

    @Test
    void concurrentRequestsToOnePartitionStoreEveryMessageOnceAndDeduplicateAcrossRequests() throws Exception {
        int threads = 12;
        int requests = 20;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<CompletableFuture<List<String>>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            work.add(CompletableFuture.supplyAsync(() -> {
                List<String> statusesOfShared = new ArrayList<>();
                for (int r = 0; r < requests; r++) {
                    String body = "{\"items\":[{\"queue\":\"fused\",\"payload\":1,\"transactionId\":\"own-" + thread + "-" + r
                            + "\"},{\"queue\":\"fused\",\"payload\":2,\"transactionId\":\"shared-" + r + "\"}]}";
                    Reply reply = http.post("/api/v1/push", body);
                    assertEquals(201, reply.status(), reply.body());
                    assertEquals("queued", reply.json().get(0).get("status").asText());
                    statusesOfShared.add(reply.json().get(1).get("status").asText());
                }
                return statusesOfShared;
            }, pool));
        }
        int queuedShared = 0;
        for (CompletableFuture<List<String>> f : work) {
            for (String s : f.get(120, TimeUnit.SECONDS)) {
                queuedShared += "queued".equals(s) ? 1 : 0;
            }
        }
        pool.shutdown();
        assertEquals(requests, queuedShared, "each shared transactionId is queued exactly once across all requests");
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT lp.last_offset + 1, (SELECT sum(end_offset - base_offset + 1)"
                     + " FROM queen.log_segments s WHERE s.partition_id = lp.id), (SELECT count(*) FROM queen.log_segments s"
                     + " WHERE s.partition_id = lp.id) FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id"
                     + " WHERE q.name = 'fused'")) {
            rs.next();
            assertEquals(threads * requests + requests, rs.getInt(1), "dense offsets, one per stored message");
            assertEquals(rs.getInt(1), rs.getInt(2), "segments cover every offset");
            System.err.println("[fusion] " + (threads * requests) + " requests to one partition became " + rs.getInt(3)
                    + " segments");
        }
    }

    @Test
    void concurrentMultiPartitionPushesInOppositeOrdersNeverDeadlock() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Integer>> pushes = new ArrayList<>();
        for (int t = 0; t < 40; t++) {
            boolean reverse = t % 2 == 0;
            pushes.add(CompletableFuture.supplyAsync(() -> {
                StringBuilder items = new StringBuilder();
                for (int p = 0; p < 6; p++) {
                    int part = reverse ? 5 - p : p;
                    if (!items.isEmpty()) {
                        items.append(',');
                    }
                    items.append("{\"queue\":\"lockorder\",\"partition\":\"p").append(part).append("\",\"payload\":1}");
                }
                return http.post("/api/v1/push", "{\"items\":[" + items + "]}").status();
            }, pool));
        }
        Set<Integer> statuses = new HashSet<>();
        for (CompletableFuture<Integer> f : pushes) {
            statuses.add(f.get(60, TimeUnit.SECONDS));
        }
        pool.shutdown();
        assertEquals(Set.of(201), statuses);
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT sum(lp.last_offset + 1) FROM queen.log_partitions lp"
                     + " JOIN queen.queues q ON q.id = lp.queue_id WHERE q.name = 'lockorder'")) {
            rs.next();
            assertEquals(240, rs.getInt(1));
        }
    }

    @Test
    void aDiscoveryPopNamesNoQueueAtTheTopLevelButEveryPartition() {
        // Dotted names give the namespace and task: both queues are in namespace "disco".
        push("disco.a.one", "p", "{\"n\":1}");
        push("disco.b.two", "q", "{\"n\":2}");
        Reply r = http.get("/api/v1/pop?namespace=disco&partitions=2&autoAck=true");
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals("", body.get("queue").asText(), "no single queue: the reference answers \"\"");
        assertTrue(body.get("queue").isTextual(), body.toString());
        assertEquals(2, body.get("messages").size(), body.toString());
        assertEquals(body.get("messages").get(0).get("partition").asText(), body.get("partition").asText(),
                "the top-level partition is the first claimed one");
        for (JsonNode m : body.get("messages")) {
            assertFalse(m.get("partitionId").asText().isEmpty(), body.toString());
        }
    }
}
