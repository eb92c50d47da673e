package io.queen.broker.http;

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

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Message browsing and traces over real HTTP on a real PostgreSQL. One scenario, built once, puts
 * a message in each status; the broker runs with an encryption key and the tenancy header on, so
 * requests without the header are the default tenant.
 */
class MessagesAndTracesIT {
    static final String A = "aaaaaaaa-0000-4000-8000-0000000000d1";
    static final String B = "bbbbbbbb-0000-4000-8000-0000000000d2";
    static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    static DatabaseSettings db;
    static Broker broker;
    /** Partitions "main" (t1 completed, t2 processing, t3 pending) and "dead" (t4 dead-lettered) of msg_status. */
    static String mainPid;
    static String deadPid;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("messages_traces");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "QUEEN_ENCRYPTION_KEY", KEY));

        assertEquals(201, post(null, "/api/v1/push", "{\"items\":["
                + "{\"queue\":\"msg_status\",\"partition\":\"main\",\"transactionId\":\"t1\",\"payload\":{\"n\":1}},"
                + "{\"queue\":\"msg_status\",\"partition\":\"main\",\"transactionId\":\"t2\",\"payload\":{\"n\":2}},"
                + "{\"queue\":\"msg_status\",\"partition\":\"main\",\"transactionId\":\"t3\",\"payload\":{\"n\":3}}]}")
                .status());
        assertEquals(201, post(null, "/api/v1/push", "{\"items\":["
                + "{\"queue\":\"msg_status\",\"partition\":\"dead\",\"transactionId\":\"t4\",\"payload\":{\"n\":4}}]}")
                .status());
        JsonNode first = popOne("/api/v1/pop/queue/msg_status/partition/main?batch=1");
        mainPid = first.get("messages").get(0).get("partitionId").asText();
        ack(first, "completed", null);
        popOne("/api/v1/pop/queue/msg_status/partition/main?batch=1&leaseSeconds=300");
        JsonNode poison = popOne("/api/v1/pop/queue/msg_status/partition/dead?batch=1");
        deadPid = poison.get("messages").get(0).get("partitionId").asText();
        ack(poison, "dlq", "poison pill");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply call(String tenant, String method, String path, String body) {
        return new HttpProbe(broker.port()).call(tenant, method, path, body);
    }

    static Reply get(String path) {
        return call(null, "GET", path, null);
    }

    static Reply post(String tenant, String path, String body) {
        return call(tenant, "POST", path, body);
    }

    static JsonNode popOne(String path) {
        Reply r = get(path);
        assertEquals(200, r.status(), r.body());
        assertEquals(1, r.json().get("messages").size(), r.body());
        return r.json();
    }

    static void ack(JsonNode popped, String status, String error) {
        JsonNode m = popped.get("messages").get(0);
        Reply r = post(null, "/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + popped.get("leaseId").asText() + "\",\"status\":\"" + status + "\""
                + (error == null ? "" : ",\"error\":\"" + error + "\"") + "}");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get(0).get("success").asBoolean(), r.body());
    }

    static List<String> field(JsonNode messages, String name) {
        List<String> out = new ArrayList<>();
        for (JsonNode m : messages) {
            out.add(m.get(name).asText());
        }
        return out;
    }

    static List<String> keys(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void theListingShowsEachMessagesStatusDataAndSegmentAddressNewestFirst() {
        Reply r = get("/api/v1/messages?queue=msg_status");
        assertEquals(200, r.status(), r.body());
        JsonNode messages = r.json().get("messages");
        assertEquals(List.of("t4", "t3", "t2", "t1"), field(messages, "transactionId"));
        assertEquals(List.of("dead_letter", "pending", "processing", "completed"), field(messages, "status"));
        assertEquals(field(messages, "status"), field(messages, "queueStatus"));
        assertEquals(4, r.json().get("total").asInt());
        assertEquals("{\"hasQueueMode\":true,\"busGroupsCount\":0,\"type\":\"queue\"}", r.json().get("mode").toString());

        JsonNode t2 = messages.get(2);
        assertEquals(List.of("id", "transactionId", "txnHash", "partitionId", "queuePath", "queue", "partition",
                "namespace", "task", "status", "queueStatus", "busStatus", "traceId", "producerSub", "payloadAvailable",
                "segment", "createdAt", "leaseExpiresAt", "data", "payload"), keys(t2));
        assertEquals("{\"seq\":0,\"frameIdx\":1}", t2.get("segment").toString(), "one push, one segment");
        assertEquals("{\"seq\":0,\"frameIdx\":0}", messages.get(0).get("segment").toString());
        assertEquals("{\"seq\":0,\"frameIdx\":2}", messages.get(1).get("segment").toString());
        assertEquals("{\"n\":2}", t2.get("data").toString());
        assertEquals(t2.get("data"), t2.get("payload"));
        assertTrue(t2.get("payloadAvailable").asBoolean());
        assertTrue(t2.get("txnHash").asText().matches("[0-9a-f]{32}"));
        assertEquals(mainPid, t2.get("partitionId").asText());
        assertEquals("msg_status/main", t2.get("queuePath").asText());
        assertEquals("{\"consumedBy\":0,\"totalGroups\":0}", t2.get("busStatus").toString());
        assertFalse(t2.get("leaseExpiresAt").isNull(), "the processing message shows its lease");
        assertTrue(messages.get(1).get("leaseExpiresAt").isNull(), "the pending one has none");
        assertEquals(36, t2.get("id").asText().length());

        assertEquals(List.of("t2"), field(get("/api/v1/messages?queue=msg_status&status=processing").json()
                .get("messages"), "transactionId"));
        assertEquals(List.of("t4"), field(get("/api/v1/messages?queue=msg_status&partition=dead").json()
                .get("messages"), "transactionId"));
        assertEquals(List.of("t3", "t2"), field(get("/api/v1/messages?queue=msg_status&limit=2&offset=1").json()
                .get("messages"), "transactionId"));
        assertEquals(0, get("/api/v1/messages?queue=msg_status&from=2999-01-01T00:00:00Z").json().get("total").asInt());
        assertEquals(0, get("/api/v1/messages?queue=msg_status&to=2000-01-01T00:00:00Z").json().get("total").asInt());
        assertEquals("none", get("/api/v1/messages?queue=no_such_queue").json().get("mode").get("type").asText());

        assertEquals(400, get("/api/v1/messages?status=lost").status());
        assertEquals(400, get("/api/v1/messages?from=yesterday").status());
        assertEquals(400, get("/api/v1/messages?limit=-1").status());
    }

    @Test
    void oneMessageReadsWithItsManagementDetailInEveryStatus() {
        Reply r = get("/api/v1/messages/" + mainPid + "/t1");
        assertEquals(200, r.status(), r.body());
        JsonNode t1 = r.json();
        assertEquals(List.of("id", "transactionId", "data", "payload", "traceId", "producerSub", "createdAt",
                "partitionId", "partition", "isEncrypted", "queue", "queuePath", "namespace", "task", "status",
                "errorMessage", "retryCount", "leaseExpiresAt", "consumerGroups", "mode", "queueConfig"), keys(t1));
        assertEquals("t1", t1.get("transactionId").asText());
        assertEquals("{\"n\":1}", t1.get("data").toString());
        assertEquals("completed", t1.get("status").asText());
        assertEquals("main", t1.get("partition").asText());
        assertEquals("msg_status", t1.get("queue").asText());
        assertEquals("msg_status/main", t1.get("queuePath").asText());
        assertFalse(t1.get("isEncrypted").asBoolean());
        assertTrue(t1.get("errorMessage").isNull());
        assertEquals(0, t1.get("retryCount").asInt());
        assertTrue(t1.get("createdAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));
        JsonNode group = t1.get("consumerGroups").get(0);
        assertEquals(List.of("name", "group", "consumed", "leaseExpiresAt"), keys(group));
        assertEquals("__QUEUE_MODE__", group.get("name").asText());
        assertTrue(group.get("consumed").asBoolean());
        assertEquals("{\"hasQueueMode\":true,\"busGroupsCount\":0,\"type\":\"queue\"}", t1.get("mode").toString());
        assertEquals(60, t1.get("queueConfig").get("leaseTime").asInt());
        assertEquals(3, t1.get("queueConfig").get("retryLimit").asInt());

        JsonNode t2 = get("/api/v1/messages/" + mainPid + "/t2").json();
        assertEquals("processing", t2.get("status").asText());
        assertFalse(t2.get("leaseExpiresAt").isNull());
        assertFalse(t2.get("consumerGroups").get(0).get("consumed").asBoolean());
        assertEquals("pending", get("/api/v1/messages/" + mainPid + "/t3").json().get("status").asText());
        JsonNode t4 = get("/api/v1/messages/" + deadPid + "/t4").json();
        assertEquals("dead_letter", t4.get("status").asText());
        assertEquals("poison pill", t4.get("errorMessage").asText());

        Reply missing = get("/api/v1/messages/" + mainPid + "/no-such-txn");
        assertEquals(404, missing.status());
        assertEquals("{\"error\":\"Message not found\"}", missing.body());
        assertEquals(404, get("/api/v1/messages/" + UUID.randomUUID() + "/t1").status());
        assertEquals(400, get("/api/v1/messages/not-a-uuid/t1").status());
        // The dead-letter routes at the same address still answer (GET does not shadow them).
        assertEquals("Message not found", call(null, "DELETE", "/api/v1/messages/" + mainPid + "/t1", null).json()
                .get("error").asText());
        assertEquals(404, post(null, "/api/v1/messages/" + mainPid + "/t1/retry", "").status());
    }

    @Test
    void encryptedPayloadsAreServedDecrypted() {
        BrokerFixture.sql(db, "INSERT INTO queen.queues (name, encryption_enabled) VALUES ('msg_secret', true)");
        assertEquals(201, post(null, "/api/v1/push", "{\"items\":[{\"queue\":\"msg_secret\",\"transactionId\":\"s1\","
                + "\"payload\":{\"card\":\"4111\"}}]}").status());
        JsonNode listed = get("/api/v1/messages?queue=msg_secret").json().get("messages").get(0);
        assertEquals("{\"card\":\"4111\"}", listed.get("data").toString());
        JsonNode read = get("/api/v1/messages/" + listed.get("partitionId").asText() + "/s1").json();
        assertTrue(read.get("isEncrypted").asBoolean(), "stored as an envelope");
        assertEquals("{\"card\":\"4111\"}", read.get("payload").toString());
    }

    @Test
    void aMessageWhoseHashRowsWerePurgedIsFoundByScanningItsSegments() {
        assertEquals(201, post(null, "/api/v1/push", "{\"items\":[{\"queue\":\"msg_old\",\"transactionId\":\"old-1\","
                + "\"payload\":\"first\"},{\"queue\":\"msg_old\",\"transactionId\":\"old-2\",\"payload\":\"second\"}]}")
                .status());
        String pid = get("/api/v1/messages?queue=msg_old").json().get("messages").get(0).get("partitionId").asText();
        BrokerFixture.sql(db, "DELETE FROM queen.log_txns WHERE partition_id = '" + pid + "'");
        BrokerFixture.sql(db, "UPDATE queen.log_partitions SET txns_start = last_offset + 1 WHERE id = '" + pid + "'");

        assertEquals(0, get("/api/v1/messages?queue=msg_old").json().get("total").asInt(),
                "the listing only covers frames whose hash row survives");
        Reply r = get("/api/v1/messages/" + pid + "/old-2");
        assertEquals(200, r.status(), r.body());
        assertEquals("\"second\"", r.json().get("data").toString());
        assertEquals("pending", r.json().get("status").asText());
    }

    @Test
    void tracesAreRecordedAndReadBackByMessageAndByName() {
        Reply first = post(null, "/api/v1/traces", "{\"transactionId\":\"t1\",\"partitionId\":\"" + mainPid
                + "\",\"data\":{\"step\":1},\"eventType\":\"processing\",\"traceNames\":[\"checkout\",\"flow-a\"]}");
        assertEquals(201, first.status(), first.body());
        assertEquals(List.of("success", "traceId"), keys(first.json()));
        assertTrue(first.json().get("success").asBoolean());
        assertEquals(201, post(null, "/api/v1/traces", "{\"transactionId\":\"t1\",\"partitionId\":\"" + mainPid
                + "\",\"data\":{\"step\":2},\"consumerGroup\":\"g1\",\"traceNames\":\"checkout\"}").status());
        assertEquals(201, post(null, "/api/v1/traces", "{\"transactionId\":\"t2\",\"partitionId\":\"" + mainPid
                + "\",\"data\":null,\"traceNames\":[\"checkout\"]}").status());

        Reply ofT1 = get("/api/v1/traces/" + mainPid + "/t1");
        assertEquals(200, ofT1.status(), ofT1.body());
        JsonNode traces = ofT1.json().get("traces");
        assertEquals(2, traces.size());
        assertEquals(List.of("id", "event_type", "data", "consumer_group", "worker_id", "created_at", "trace_names"),
                keys(traces.get(0)));
        assertEquals(first.json().get("traceId").asText(), traces.get(0).get("id").asText(), "oldest first");
        assertEquals("processing", traces.get(0).get("event_type").asText());
        assertEquals("{\"step\":1}", traces.get(0).get("data").toString());
        assertEquals("__QUEUE_MODE__", traces.get(0).get("consumer_group").asText());
        assertEquals("seg-rust", traces.get(0).get("worker_id").asText());
        assertEquals("[\"checkout\",\"flow-a\"]", traces.get(0).get("trace_names").toString());
        assertEquals("info", traces.get(1).get("event_type").asText());
        assertEquals("g1", traces.get(1).get("consumer_group").asText());
        assertEquals("[\"checkout\"]", traces.get(1).get("trace_names").toString());

        Reply byName = get("/api/v1/traces/by-name/checkout");
        assertEquals(200, byName.status(), byName.body());
        assertEquals(3, byName.json().get("total").asInt());
        JsonNode named = byName.json().get("traces").get(0);
        assertEquals(List.of("id", "transaction_id", "partition_id", "event_type", "data", "consumer_group", "worker_id",
                "created_at", "queue_name", "partition_name", "message_payload", "trace_names"), keys(named));
        assertEquals("msg_status", named.get("queue_name").asText());
        assertEquals("main", named.get("partition_name").asText());
        assertTrue(named.get("message_payload").isNull());
        Reply page = get("/api/v1/traces/by-name/checkout?limit=1&offset=2");
        assertEquals(1, page.json().get("traces").size());
        assertEquals("t2", page.json().get("traces").get(0).get("transaction_id").asText());
        assertTrue(page.json().get("traces").get(0).get("data").isNull());
        assertEquals(3, page.json().get("total").asInt(), "total counts every match, not the page");
        assertEquals("{\"limit\":1,\"offset\":2}", page.json().get("pagination").toString());

        Reply names = get("/api/v1/traces/names");
        assertEquals(200, names.status(), names.body());
        JsonNode checkout = null;
        for (JsonNode n : names.json().get("trace_names")) {
            if (n.get("trace_name").asText().equals("checkout")) {
                checkout = n;
            }
        }
        assertTrue(checkout != null, names.body());
        assertEquals(List.of("trace_name", "trace_count", "message_count", "last_seen"), keys(checkout));
        assertEquals(3, checkout.get("trace_count").asInt());
        assertEquals(2, checkout.get("message_count").asInt());
        assertTrue(names.json().get("total").asInt() >= 2);
        assertEquals("{\"limit\":50,\"offset\":0}", names.json().get("pagination").toString());

        assertEquals("transactionId and partitionId are required", post(null, "/api/v1/traces",
                "{\"transactionId\":\"t1\",\"data\":{}}").json().get("error").asText());
        assertEquals("data is required", post(null, "/api/v1/traces",
                "{\"transactionId\":\"t1\",\"partitionId\":\"" + mainPid + "\"}").json().get("error").asText());
        assertEquals(400, post(null, "/api/v1/traces", "{\"transactionId\":\"t1\",\"partitionId\":\"nope\",\"data\":1}")
                .status());
        assertEquals(400, post(null, "/api/v1/traces", "{\"transactionId\":\"t1\",\"partitionId\":\"" + mainPid
                + "\",\"data\":1,\"traceNames\":[1]}").status());
        Reply unknown = post(null, "/api/v1/traces", "{\"transactionId\":\"t1\",\"partitionId\":\"" + UUID.randomUUID()
                + "\",\"data\":{}}");
        assertEquals(404, unknown.status());
        assertEquals("{\"success\":false,\"error\":\"Message not found\"}", unknown.body());
        assertEquals("{\"traces\":[]}", get("/api/v1/traces/" + UUID.randomUUID() + "/t1").body());
    }

    @Test
    void tenantsSeeOnlyTheirOwnMessagesAndTraces() {
        assertEquals(201, post(A, "/api/v1/push", "{\"items\":[{\"queue\":\"msg_orders\",\"transactionId\":\"same\","
                + "\"payload\":\"from-a\"}]}").status());
        assertEquals(201, post(B, "/api/v1/push", "{\"items\":[{\"queue\":\"msg_orders\",\"transactionId\":\"same\","
                + "\"payload\":\"from-b\"}]}").status());

        JsonNode listedA = call(A, "GET", "/api/v1/messages?queue=msg_orders", null).json().get("messages");
        JsonNode listedB = call(B, "GET", "/api/v1/messages?queue=msg_orders", null).json().get("messages");
        assertEquals(1, listedA.size());
        assertEquals("\"from-a\"", listedA.get(0).get("data").toString());
        assertEquals("\"from-b\"", listedB.get(0).get("data").toString());
        assertEquals(0, get("/api/v1/messages?queue=msg_orders").json().get("total").asInt(), "default tenant: none");

        String pidA = listedA.get(0).get("partitionId").asText();
        assertEquals(200, call(A, "GET", "/api/v1/messages/" + pidA + "/same", null).status());
        assertEquals(404, call(B, "GET", "/api/v1/messages/" + pidA + "/same", null).status());

        String trace = "{\"transactionId\":\"same\",\"partitionId\":\"" + pidA + "\",\"data\":{},\"traceNames\":[\"iso\"]}";
        assertEquals(404, post(B, "/api/v1/traces", trace).status(), "B cannot trace A's message");
        assertEquals(201, post(A, "/api/v1/traces", trace).status());
        assertEquals(1, call(A, "GET", "/api/v1/traces/" + pidA + "/same", null).json().get("traces").size());
        assertEquals(0, call(B, "GET", "/api/v1/traces/" + pidA + "/same", null).json().get("traces").size());
        assertEquals(1, call(A, "GET", "/api/v1/traces/by-name/iso", null).json().get("total").asInt());
        assertEquals(0, call(B, "GET", "/api/v1/traces/by-name/iso", null).json().get("total").asInt());
        assertTrue(call(A, "GET", "/api/v1/traces/names", null).body().contains("\"iso\""));
        assertFalse(call(B, "GET", "/api/v1/traces/names", null).body().contains("\"iso\""));
    }
}
