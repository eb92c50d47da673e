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

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** POST /api/v1/transaction: acks and pushes commit together or not at all. */
class TransactionRouteIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("transactions");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static JsonNode popOne(String queue) {
        Reply r = http.get("/api/v1/pop/queue/" + queue + "?batch=1");
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    private static String ackOp(JsonNode pop, String status) {
        JsonNode m = pop.get("messages").get(0);
        return "{\"type\":\"ack\",\"transactionId\":\"" + m.get("transactionId").asText() + "\",\"partitionId\":\""
                + m.get("partitionId").asText() + "\",\"leaseId\":\"" + pop.get("leaseId").asText() + "\",\"status\":\""
                + status + "\"}";
    }

    @Test
    void anAckAndAPushCommitTogether() {
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"tx_in\",\"payload\":{\"step\":1}}]}");
        JsonNode pop = popOne("tx_in");
        Reply r = http.post("/api/v1/transaction", "{\"operations\":[" + ackOp(pop, "completed")
                + ",{\"type\":\"push\",\"items\":[{\"queue\":\"tx_out\",\"payload\":{\"step\":2},\"traceId\":\"0199e0c4-1111-7000-8000-000000000001\"}]}]}");
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertTrue(body.get("success").asBoolean(), r.body());
        assertEquals("ack", body.get("results").get(0).get("type").asText());
        assertTrue(body.get("results").get(0).get("error").isNull());
        JsonNode pushed = body.get("results").get(1);
        assertEquals("push", pushed.get("type").asText());
        assertEquals("tx_out", pushed.get("queueName").asText());
        assertEquals(204, http.get("/api/v1/pop/queue/tx_in").status(), "the ack committed");
        JsonNode out = popOne("tx_out");
        assertEquals(2, out.get("messages").get(0).get("data").get("step").asInt());
        assertEquals(pushed.get("messageId").asText(), out.get("messages").get(0).get("id").asText());
        assertEquals("0199e0c4-1111-7000-8000-000000000001", out.get("messages").get(0).get("traceId").asText(),
                "the transaction path stores the trace id");
    }

    @Test
    void aFailingAckRollsBackThePushesOfItsTransaction() {
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"tx_rollback_in\",\"payload\":1}]}");
        JsonNode pop = popOne("tx_rollback_in");
        String unknownAck = "{\"type\":\"ack\",\"transactionId\":\"never-pushed\",\"partitionId\":\""
                + pop.get("messages").get(0).get("partitionId").asText() + "\",\"leaseId\":\""
                + pop.get("leaseId").asText() + "\"}";
        Reply r = http.post("/api/v1/transaction", "{\"operations\":["
                + "{\"type\":\"push\",\"queue\":\"tx_rollback_out\",\"payload\":1}," + unknownAck + "]}");
        assertEquals(200, r.status());
        assertFalse(r.json().get("success").asBoolean());
        assertEquals("ack_rejected", r.json().get("reason").asText());
        assertTrue(r.json().get("error").asText().startsWith("QTXN"), r.body());
        assertEquals(0, r.json().get("results").size());
        assertEquals(204, http.get("/api/v1/pop/queue/tx_rollback_out").status(), "the push rolled back");
    }

    @Test
    void anExpiredLeaseRejectsTheWholeTransaction() throws Exception {
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"tx_lease\",\"payload\":1}]}");
        JsonNode pop = http.get("/api/v1/pop/queue/tx_lease?leaseSeconds=1").json();
        DatabaseClock.awaitLeaseExpired(db, pop.get("leaseId").asText());
        Reply r = http.post("/api/v1/transaction", "{\"operations\":[" + ackOp(pop, "completed")
                + ",{\"type\":\"push\",\"queue\":\"tx_lease_out\",\"payload\":1}]}");
        assertFalse(r.json().get("success").asBoolean());
        assertEquals("invalid or expired lease; transaction rolled back", r.json().get("error").asText());
        assertEquals(204, http.get("/api/v1/pop/queue/tx_lease_out").status());
    }

    @Test
    void aDuplicatePushInsideTheWindowRollsBackAndAnIntraBundleRepeatDoesNot() {
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"tx_dup\",\"payload\":1,\"transactionId\":\"once\"}]}");
        Reply stored = http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":["
                + "{\"queue\":\"tx_dup_other\",\"payload\":1},{\"queue\":\"tx_dup\",\"payload\":1,\"transactionId\":\"once\"}]}]}");
        assertFalse(stored.json().get("success").asBoolean());
        assertEquals("duplicate", stored.json().get("reason").asText());
        assertEquals(204, http.get("/api/v1/pop/queue/tx_dup_other").status());

        Reply bundle = http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":["
                + "{\"queue\":\"tx_dup2\",\"payload\":1,\"transactionId\":\"twice\"},"
                + "{\"queue\":\"tx_dup2\",\"payload\":2,\"transactionId\":\"twice\"}]}]}");
        assertTrue(bundle.json().get("success").asBoolean(), bundle.body());
        assertFalse(bundle.json().get("results").get(0).has("duplicate"));
        assertTrue(bundle.json().get("results").get(1).get("duplicate").asBoolean());
    }

    @Test
    void concurrentTransactionsAndPushesAcrossPartitionsNeverDeadlock() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        java.util.List<java.util.concurrent.CompletableFuture<String>> work = new java.util.ArrayList<>();
        for (int t = 0; t < 48; t++) {
            boolean reverse = t % 2 == 0;
            boolean transaction = t % 3 != 0;
            work.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                StringBuilder items = new StringBuilder();
                for (int p = 0; p < 5; p++) {
                    int part = reverse ? 4 - p : p;
                    if (!items.isEmpty()) {
                        items.append(',');
                    }
                    items.append("{\"queue\":\"tx_locks\",\"partition\":\"p").append(part).append("\",\"payload\":1}");
                }
                Reply r = transaction
                        ? http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":[" + items + "]}]}")
                        : http.post("/api/v1/push", "{\"items\":[" + items + "]}");
                return r.status() + (transaction ? ":" + r.json().get("success").asBoolean() : "");
            }, pool));
        }
        java.util.Set<String> outcomes = new java.util.HashSet<>();
        for (var f : work) {
            outcomes.add(f.get(120, java.util.concurrent.TimeUnit.SECONDS));
        }
        pool.shutdown();
        assertEquals(java.util.Set.of("200:true", "201"), outcomes);
    }

    @Test
    void malformedTransactionsAre400InTheSameEnvelope() {
        Reply noOps = http.post("/api/v1/transaction", "{\"requiredLeases\":[]}");
        assertEquals(400, noOps.status());
        assertEquals("bad_request", noOps.json().get("reason").asText());
        assertFalse(noOps.json().get("success").asBoolean());
        assertEquals(400, http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"teleport\"}]}").status());
        assertEquals(400, http.post("/api/v1/transaction", "not json").status());
        assertEquals(400, http.post("/api/v1/transaction",
                "{\"operations\":[{\"type\":\"ack\",\"transactionId\":\"x\",\"partitionId\":\"zzz\"}]}").status());
        Reply rider = http.post("/api/v1/transaction",
                "{\"operations\":[{\"type\":\"push\",\"queue\":\"tx_kv\",\"payload\":1}],\"kv\":[{\"op\":\"put\"}]}");
        assertEquals(400, rider.status());
        assertEquals(204, http.get("/api/v1/pop/queue/tx_kv").status(), "a refused rider writes nothing");
    }
}
