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

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The dead-letter routes over real HTTP on a real PostgreSQL, with dead letters produced by real nacks. */
class DeadLetterRoutesIT {
    private static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("dead_letter_routes");
        // A key is loaded so the decrypt-on-read path runs; only queues with encryption on use it.
        broker = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", KEY));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** A queue whose first failed nack dead-letters (retry_limit 0), created before any push reads its options. */
    static void strictQueue(String queue, boolean encrypted) {
        BrokerFixture.sql(db, "INSERT INTO queen.queues (name, retry_limit, encryption_enabled) VALUES ('" + queue
                + "', 0, " + encrypted + ") ON CONFLICT (tenant_id, name) DO UPDATE SET retry_limit = 0");
    }

    static JsonNode push(String queue, String partition, String payload) {
        Reply r = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + queue + "\",\"partition\":\"" + partition
                + "\",\"payload\":" + payload + "}]}");
        assertEquals(201, r.status(), r.body());
        return r.json().get(0);
    }

    /** Pops the head of the partition for the group and nacks it as failed; the ack must report a dead letter. */
    static JsonNode popAndFail(String queue, String partition, String group, String error) {
        String groupQuery = group == null ? "" : "&consumerGroup=" + group + "&subscriptionMode=all";
        Reply popped = http.get("/api/v1/pop/queue/" + queue + "/partition/" + partition + "?batch=1" + groupQuery);
        assertEquals(200, popped.status(), popped.body());
        JsonNode m = popped.json().get("messages").get(0);
        Reply nack = http.post("/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + popped.json().get("leaseId").asText() + "\",\"status\":\"failed\",\"error\":\"" + error + "\""
                + (group == null ? "" : ",\"consumerGroup\":\"" + group + "\"") + "}");
        assertEquals(200, nack.status(), nack.body());
        assertTrue(nack.json().get(0).get("dlq").asBoolean(), nack.body());
        return m;
    }

    static JsonNode deadLetter(String queue, String partition, String payload, String error) {
        strictQueue(queue, false);
        push(queue, partition, payload);
        return popAndFail(queue, partition, null, error);
    }

    static List<String> keys(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static int dlqRows(String where) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.log_dlq WHERE " + where)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void aDeadLetterIsListedNewestFirstWithTheReferenceFields() {
        JsonNode first = deadLetter("dlq_list", "p", "{\"job\":1}", "boom");
        // A named group has its own cursor: it dead-letters the same message, a second row at the same address.
        JsonNode second = popAndFail("dlq_list", "p", "workers", "bust");

        Reply r = http.get("/api/v1/dlq?queue=dlq_list");
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals(List.of("messages", "pagination", "total"), keys(body));
        assertEquals(2, body.get("total").asInt());
        assertEquals(100, body.get("pagination").get("limit").asInt());
        assertEquals(0, body.get("pagination").get("offset").asInt());

        JsonNode newest = body.get("messages").get(0);
        assertEquals(List.of("id", "transactionId", "partitionId", "queue", "partition", "consumerGroup", "errorMessage",
                "retryCount", "data", "producerSub", "createdAt", "failedAt"), keys(newest));
        assertEquals(second.get("transactionId").asText(), newest.get("transactionId").asText(), "newest first");
        assertEquals("workers", newest.get("consumerGroup").asText());
        assertEquals("bust", newest.get("errorMessage").asText());
        JsonNode older = body.get("messages").get(1);
        assertEquals(first.get("transactionId").asText(), older.get("transactionId").asText());
        assertEquals(first.get("partitionId").asText(), older.get("partitionId").asText());
        assertEquals("dlq_list", older.get("queue").asText());
        assertEquals("p", older.get("partition").asText());
        assertEquals("__QUEUE_MODE__", older.get("consumerGroup").asText());
        assertEquals("boom", older.get("errorMessage").asText());
        assertEquals(0, older.get("retryCount").asInt());
        assertEquals(1, older.get("data").get("job").asInt());
        assertTrue(older.get("producerSub").isNull());
        assertEquals(older.get("failedAt").asText(), older.get("createdAt").asText());
        assertTrue(older.get("failedAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));
        assertTrue(older.get("id").asText().matches("[0-9a-f-]{36}"));

        JsonNode byGroup = http.get("/api/v1/dlq?queue=dlq_list&consumerGroup=workers").json();
        assertEquals(1, byGroup.get("total").asInt());
        assertEquals("bust", byGroup.get("messages").get(0).get("errorMessage").asText());
        JsonNode paged = http.get("/api/v1/dlq?queue=dlq_list&limit=1&offset=1").json();
        assertEquals(1, paged.get("total").asInt(), "total is the page length");
        assertEquals(1, paged.get("pagination").get("limit").asInt());
        assertEquals(1, paged.get("pagination").get("offset").asInt());
        assertEquals(first.get("transactionId").asText(), paged.get("messages").get(0).get("transactionId").asText());
        assertEquals(0, http.get("/api/v1/dlq?queue=no_such_queue").json().get("total").asInt());
        assertEquals(400, http.get("/api/v1/dlq?limit=-1").status());
        assertEquals(400, http.get("/api/v1/dlq?offset=x").status());
    }

    @Test
    void aReplayRepushesTheSnapshotUnderAFreshTransactionIdAndRemovesTheRow() throws Exception {
        JsonNode dead = deadLetter("dlq_replay", "p", "{\"job\":7}", "bad");
        String pid = dead.get("partitionId").asText();
        String txn = dead.get("transactionId").asText();

        Reply r = http.post("/api/v1/messages/" + pid + "/" + txn + "/retry", "");
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals(List.of("success", "queue", "partition", "replayedAs", "dlqRowRemoved"), keys(body));
        assertTrue(body.get("success").asBoolean());
        assertEquals("dlq_replay", body.get("queue").asText());
        assertEquals("p", body.get("partition").asText());
        assertTrue(body.get("dlqRowRemoved").asBoolean());
        JsonNode as = body.get("replayedAs");
        assertEquals(List.of("index", "message_id", "transaction_id", "queueName", "status"), keys(as));
        assertEquals(0, as.get("index").asInt());
        assertEquals("queued", as.get("status").asText());
        assertEquals("dlq_replay", as.get("queueName").asText());
        assertNotEquals(txn, as.get("transaction_id").asText(), "a fresh transactionId, or dedup would drop it");
        assertEquals(0, dlqRows("transaction_id = '" + txn + "'"));
        assertEquals(0, http.get("/api/v1/dlq?queue=dlq_replay").json().get("total").asInt());

        Reply again = http.get("/api/v1/pop/queue/dlq_replay");
        assertEquals(200, again.status(), "the replayed message is poppable again");
        JsonNode m = again.json().get("messages").get(0);
        assertEquals(as.get("transaction_id").asText(), m.get("transactionId").asText());
        assertEquals(as.get("message_id").asText(), m.get("id").asText());
        assertEquals(7, m.get("data").get("job").asInt());

        Reply gone = http.post("/api/v1/messages/" + pid + "/" + txn + "/retry", "");
        assertEquals(404, gone.status());
        assertFalse(gone.json().get("success").asBoolean());
        assertEquals("Message not found", gone.json().get("error").asText());
        assertEquals(400, http.post("/api/v1/messages/not-a-uuid/" + txn + "/retry", "").status());
    }

    /** The id GET /dlq lists for the queue's dead letter of that group. */
    static String rowId(String queue, String group) {
        JsonNode listed = http.get("/api/v1/dlq?queue=" + queue + "&consumerGroup=" + group).json();
        assertEquals(1, listed.get("total").asInt(), listed.toString());
        return listed.get("messages").get(0).get("id").asText();
    }

    @Test
    void aRowReplayedByItsIdIsPoppableAgainAndOnlyThatRowGoes() throws Exception {
        JsonNode dead = deadLetter("dlq_byid", "p", "{\"job\":9}", "bad");
        popAndFail("dlq_byid", "p", "workers", "worse");
        String txn = dead.get("transactionId").asText();
        String id = rowId("dlq_byid", "__QUEUE_MODE__");

        Reply r = http.post("/api/v1/dlq/" + id + "/replay", "");
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertEquals(List.of("success", "result", "queue", "partition", "consumerGroup", "dlqId",
                "originalTransactionId", "replayedAs", "dlqRowRemoved"), keys(body));
        assertEquals("moved", body.get("result").asText());
        assertEquals("dlq_byid", body.get("queue").asText());
        assertEquals("p", body.get("partition").asText());
        assertEquals("__QUEUE_MODE__", body.get("consumerGroup").asText());
        assertEquals(id, body.get("dlqId").asText());
        assertEquals(txn, body.get("originalTransactionId").asText());
        assertTrue(body.get("dlqRowRemoved").asBoolean());
        JsonNode as = body.get("replayedAs");
        assertEquals(List.of("index", "message_id", "transaction_id", "queueName", "status", "offset"), keys(as));
        assertEquals("dlq:" + id, as.get("transaction_id").asText());
        assertEquals("queued", as.get("status").asText());
        assertEquals(0, dlqRows("id = '" + id + "'"));
        assertEquals(1, dlqRows("transaction_id = '" + txn + "'"), "the other group's dead letter stays");

        Reply popped = http.get("/api/v1/pop/queue/dlq_byid/partition/p");
        assertEquals(200, popped.status(), "the replayed message is poppable again");
        JsonNode m = popped.json().get("messages").get(0);
        assertEquals("dlq:" + id, m.get("transactionId").asText());
        assertEquals(as.get("message_id").asText(), m.get("id").asText());
        assertEquals(9, m.get("data").get("job").asInt());

        Reply gone = http.post("/api/v1/dlq/" + id + "/replay", "");
        assertEquals(404, gone.status(), gone.body());
        assertEquals("gone", gone.json().get("result").asText());
        assertEquals(id, gone.json().get("dlqId").asText());
        assertEquals(404, http.post("/api/v1/dlq/not-a-uuid/replay", "").status(), "not a row id: gone too");
    }

    @Test
    void aRowReplayedByIdMovesToAnOverrideAndASecondMoveIsADuplicate() throws Exception {
        deadLetter("dlq_byid_src", "p", "{\"job\":3}", "bad");
        String id = rowId("dlq_byid_src", "__QUEUE_MODE__");
        String snapshot = "SELECT partition_id, consumer_group, \"offset\", transaction_id, payload, error FROM"
                + " queen.log_dlq WHERE id = '" + id + "'";
        BrokerFixture.sql(db, "CREATE TABLE dlq_copy AS " + snapshot);

        assertEquals(400, http.post("/api/v1/dlq/" + id + "/replay", "[1]").status());
        Reply blank = http.post("/api/v1/dlq/" + id + "/replay", "{\"queue\":\"  \"}");
        assertEquals(400, blank.status(), blank.body());
        assertFalse(blank.json().get("success").asBoolean());

        Reply moved = http.post("/api/v1/dlq/" + id + "/replay", "{\"queue\":\"dlq_byid_sink\"}");
        assertEquals(200, moved.status(), moved.body());
        assertEquals("dlq_byid_sink", moved.json().get("queue").asText());
        assertEquals("p", moved.json().get("partition").asText(), "an omitted half keeps the row's");
        Reply popped = http.get("/api/v1/pop/queue/dlq_byid_sink/partition/p");
        assertEquals(200, popped.status(), popped.body());
        assertEquals(3, popped.json().get("messages").get(0).get("data").get("job").asInt());

        // As if the delete had not happened: the same row again is a dedup duplicate, and it stays.
        BrokerFixture.sql(db, "INSERT INTO queen.log_dlq (id, partition_id, consumer_group, \"offset\","
                + " transaction_id, payload, error) SELECT '" + id + "', * FROM dlq_copy");
        Reply dup = http.post("/api/v1/dlq/" + id + "/replay", "{\"queue\":\"dlq_byid_sink\"}");
        assertEquals(200, dup.status(), dup.body());
        assertEquals("duplicate", dup.json().get("result").asText());
        assertEquals("duplicate", dup.json().get("replayedAs").get("status").asText());
        assertEquals("00000000-0000-0000-0000-000000000000", dup.json().get("replayedAs").get("message_id").asText());
        assertFalse(dup.json().get("dlqRowRemoved").asBoolean());
        assertEquals(1, dlqRows("id = '" + id + "'"));

        // Push maintenance refuses a replay rather than spooling it; the row stays.
        assertEquals(200, http.post("/api/v1/system/maintenance", "{\"enabled\":true}").status());
        try {
            Reply refused = http.post("/api/v1/dlq/" + id + "/replay", "");
            assertEquals(503, refused.status(), refused.body());
            assertEquals("maintenance", refused.json().get("result").asText());
        } finally {
            assertEquals(200, http.post("/api/v1/system/maintenance", "{\"enabled\":false}").status());
        }
        assertEquals(1, dlqRows("id = '" + id + "'"));
        BrokerFixture.sql(db, "DROP TABLE dlq_copy");
    }

    @Test
    void aDeadLetterIsDeletedByItsAddressOnce() throws Exception {
        JsonNode dead = deadLetter("dlq_delete", "p", "\"x\"", "nope");
        String pid = dead.get("partitionId").asText();
        String txn = dead.get("transactionId").asText();

        Reply deleted = http.delete("/api/v1/messages/" + pid + "/" + txn);
        assertEquals(200, deleted.status(), deleted.body());
        assertEquals(List.of("success", "partitionId", "transactionId", "message"), keys(deleted.json()));
        assertTrue(deleted.json().get("success").asBoolean());
        assertEquals(pid, deleted.json().get("partitionId").asText());
        assertEquals(txn, deleted.json().get("transactionId").asText());
        assertEquals("Message deleted successfully", deleted.json().get("message").asText());
        assertEquals(0, dlqRows("transaction_id = '" + txn + "'"));

        Reply missing = http.delete("/api/v1/messages/" + pid + "/" + txn);
        assertEquals(404, missing.status());
        assertFalse(missing.json().get("success").asBoolean());
        assertEquals("Message not found", missing.json().get("error").asText());
        assertTrue(missing.json().get("message").asText().startsWith("No dead-letter row for this address."));

        Reply badUuid = http.delete("/api/v1/messages/12345/" + txn);
        assertEquals(400, badUuid.status());
        assertTrue(badUuid.json().get("error").asText().contains("not a UUID"));
    }

    @Test
    void aQueuesDeadLettersArePurgedTogether() throws Exception {
        strictQueue("dlq_purge", false);
        push("dlq_purge", "p", "1");
        push("dlq_purge", "p", "2");
        popAndFail("dlq_purge", "p", null, "e1");
        popAndFail("dlq_purge", "p", null, "e2");
        deadLetter("dlq_keep", "p", "3", "e3");

        Reply none = http.delete("/api/v1/dlq?queue=dlq_purge&consumerGroup=other");
        assertEquals(200, none.status());
        assertEquals(0, none.json().get("deleted").asInt());
        assertEquals("other", none.json().get("consumerGroup").asText());

        Reply purged = http.delete("/api/v1/dlq?queue=dlq_purge");
        assertEquals(200, purged.status(), purged.body());
        assertEquals(List.of("success", "deleted", "queue", "consumerGroup"), keys(purged.json()));
        assertTrue(purged.json().get("success").asBoolean());
        assertEquals(2, purged.json().get("deleted").asInt());
        assertEquals("dlq_purge", purged.json().get("queue").asText());
        assertTrue(purged.json().get("consumerGroup").isNull());
        assertEquals(0, http.get("/api/v1/dlq?queue=dlq_purge").json().get("total").asInt());
        assertEquals(1, http.get("/api/v1/dlq?queue=dlq_keep").json().get("total").asInt(), "other queues keep theirs");

        Reply noQueue = http.delete("/api/v1/dlq");
        assertEquals(400, noQueue.status());
        assertFalse(noQueue.json().get("success").asBoolean());
        assertEquals("queue is required", noQueue.json().get("error").asText());
        assertTrue(noQueue.json().has("message"));
        assertEquals(1, http.get("/api/v1/dlq?queue=dlq_keep").json().get("total").asInt(), "a refused purge deletes nothing");
    }

    @Test
    void anEncryptedSnapshotIsDecryptedOnReadAndReplayedAsPlaintext() throws Exception {
        strictQueue("dlq_secret", true);
        push("dlq_secret", "p", "{\"secret\":\"s3\"}");
        JsonNode dead = popAndFail("dlq_secret", "p", null, "leak");
        assertEquals("s3", dead.get("data").get("secret").asText(), "pop decrypts");
        assertEquals(1, dlqRows("transaction_id = '" + dead.get("transactionId").asText() + "' AND payload->>'encrypted' IS NOT NULL"),
                "the snapshot keeps the envelope at rest");

        JsonNode listed = http.get("/api/v1/dlq?queue=dlq_secret").json().get("messages").get(0);
        assertEquals("s3", listed.get("data").get("secret").asText());
        assertTrue(listed.get("isEncrypted").asBoolean());

        Reply r = http.post("/api/v1/messages/" + dead.get("partitionId").asText() + "/"
                + dead.get("transactionId").asText() + "/retry", "");
        assertEquals(200, r.status(), r.body());
        JsonNode again = http.get("/api/v1/pop/queue/dlq_secret").json().get("messages").get(0);
        assertEquals("s3", again.get("data").get("secret").asText(), "replayed once-encrypted, not double-encrypted");
    }
}
