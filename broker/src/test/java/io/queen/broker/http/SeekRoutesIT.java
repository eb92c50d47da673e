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
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Consumer-group seeks and the subscription route over real HTTP on a real PostgreSQL. */
class SeekRoutesIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("seek_routes");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static void push(String queue, String partition, String... payloads) {
        http.push(queue, partition, payloads);
    }

    static Reply pop(String queue, String group, String extra) {
        String batch = extra.contains("batch=") ? "" : "&batch=10";
        return http.get("/api/v1/pop/queue/" + queue + "?consumerGroup=" + group + "&subscriptionMode=all" + batch
                + extra);
    }

    static List<String> data(Reply popped) {
        assertEquals(200, popped.status(), popped.body());
        List<String> out = new ArrayList<>();
        for (JsonNode m : popped.json().get("messages")) {
            out.add(m.get("data").asText());
        }
        return out;
    }

    static void ackAll(Reply popped, String group) {
        StringBuilder acks = new StringBuilder();
        for (JsonNode m : popped.json().get("messages")) {
            if (!acks.isEmpty()) {
                acks.append(',');
            }
            acks.append("{\"transactionId\":\"").append(m.get("transactionId").asText()).append("\",\"partitionId\":\"")
                    .append(m.get("partitionId").asText()).append("\",\"leaseId\":\"")
                    .append(popped.json().get("leaseId").asText()).append("\"}");
        }
        Reply r = http.post("/api/v1/ack/batch", "{\"consumerGroup\":\"" + group + "\",\"acknowledgments\":[" + acks + "]}");
        assertEquals(200, r.status(), r.body());
    }

    static Reply seek(String group, String queue, String body) {
        return http.post("/api/v1/consumer-groups/" + group + "/queues/" + queue + "/seek", body);
    }

    static Reply seekPartition(String group, String queue, String partition, String body) {
        return http.post("/api/v1/consumer-groups/" + group + "/queues/" + queue + "/partitions/" + partition + "/seek",
                body);
    }

    static String query(String sql) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : "<no row>";
        }
    }

    static List<String> keys(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void aSeekToEndSkipsWhatIsPendingAndLaterPushesDeliver() {
        push("seek_end", "p", "\"a\"", "\"b\"", "\"c\"");
        Reply r = seek("g", "seek_end", "{\"toEnd\":true}");
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("success", "consumerGroup", "queueName", "seekToEnd", "targetTimestamp",
                "partitionsUpdated"), keys(r.json()));
        assertTrue(r.json().get("success").asBoolean());
        assertEquals("g", r.json().get("consumerGroup").asText());
        assertEquals("seek_end", r.json().get("queueName").asText());
        assertTrue(r.json().get("seekToEnd").asBoolean());
        assertTrue(r.json().get("targetTimestamp").isNull());
        assertEquals(1, r.json().get("partitionsUpdated").asInt());

        assertEquals(204, pop("seek_end", "g", "").status(), "a group's first pop after the seek does not re-seed it");
        push("seek_end", "p", "\"d\"");
        assertEquals(List.of("d"), data(pop("seek_end", "g", "")));

        Reply queueMode = seek("__QUEUE_MODE__", "seek_end", "{\"toEnd\":true}");
        assertEquals(200, queueMode.status());
        assertEquals(204, http.get("/api/v1/pop/queue/seek_end").status(), "queue mode seeks like any group");
    }

    @Test
    void aSeekToATimestampRedeliversOnlyWhatWasWrittenAfterIt() throws Exception {
        push("seek_ts", "p", "\"early\"");
        // The database's clock stamps segments, so the boundary is taken from it too, strictly
        // after the early segment and strictly before the late one.
        DatabaseClock.awaitNewestSegmentOlderThan(db, "seek_ts", Duration.ZERO);
        OffsetDateTime between = OffsetDateTime.parse(query(
                "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"));
        DatabaseClock.awaitPast(db, "SELECT ?::timestamptz", between);
        push("seek_ts", "p", "\"late\"");
        Reply all = pop("seek_ts", "g", "");
        assertEquals(List.of("early", "late"), data(all));
        ackAll(all, "g");
        assertEquals(204, pop("seek_ts", "g", "").status());

        Reply r = seek("g", "seek_ts", "{\"timestamp\":\"" + between + "\"}");
        assertEquals(200, r.status(), r.body());
        assertFalse(r.json().get("seekToEnd").asBoolean());
        assertEquals(between.toInstant(), OffsetDateTime.parse(r.json().get("targetTimestamp").asText()).toInstant());
        assertTrue(r.json().get("targetTimestamp").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));
        assertEquals(List.of("late"), data(pop("seek_ts", "g", "")));

        Reply future = seek("other", "seek_ts", "{\"timestamp\":\"2999-01-01T00:00:00Z\"}");
        assertEquals(200, future.status());
        assertEquals(204, pop("seek_ts", "other", "").status(), "nothing that recent: the cursor goes to the end");
    }

    @Test
    void aSeekReleasesALiveLeaseAndResetsTheRetryState() throws Exception {
        push("seek_lease", "p", "\"one\"", "\"two\"");
        Reply first = pop("seek_lease", "g", "&batch=1");
        JsonNode m = first.json().get("messages").get(0);
        Reply nack = http.post("/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + first.json().get("leaseId").asText() + "\",\"status\":\"failed\",\"consumerGroup\":\"g\"}");
        assertTrue(nack.json().get(0).get("success").asBoolean(), nack.body());
        Reply leased = http.get("/api/v1/pop/queue/seek_lease?consumerGroup=g&batch=1&leaseSeconds=300");
        assertEquals(List.of("one"), data(leased));
        assertEquals(204, pop("seek_lease", "g", "").status(), "the partition is leased");
        String cursor = "SELECT concat_ws('|', coalesce(c.worker_id, '-'), c.batch_retry_count, c.attempt_count,"
                + " coalesce(c.batch_end::text, '-')) FROM queen.log_consumers c JOIN queen.log_partitions p"
                + " ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = 'seek_lease' AND c.consumer_group = 'g'";
        assertEquals(leased.json().get("leaseId").asText() + "|1|2|0", query(cursor));

        assertEquals(200, seek("g", "seek_lease", "{\"timestamp\":\"1970-01-01T00:00:00Z\"}").status());
        assertEquals("-|0|0|-", query(cursor), "lease released, retry and attempt state reset");
        Reply again = pop("seek_lease", "g", "");
        assertEquals(List.of("one", "two"), data(again), "served at once, from the seek position");
        assertEquals(1, again.json().get("messages").get(0).get("deliveryAttempt").asInt());
        Reply stale = http.post("/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + leased.json().get("leaseId").asText() + "\",\"status\":\"completed\",\"consumerGroup\":\"g\"}");
        assertEquals("invalid or expired lease", stale.json().get(0).get("error").asText());
    }

    @Test
    void aPartitionSeekMovesOnlyThatPartitionAndPublishesItsRepair() throws Exception {
        push("seek_part", "a", "\"from-a\"");
        push("seek_part", "b", "\"from-b\"");
        BrokerFixture.sql(db, "INSERT INTO queen.consumer_watermarks (queue_id, consumer_group, last_empty_scan_at)"
                + " SELECT id, 'g', now() FROM queen.queues WHERE name = 'seek_part'");
        BrokerFixture.sql(db, "INSERT INTO queen.hotlist_repairs (queue_name, consumer_group, repair_at, reason)"
                + " VALUES ('stale_queue', 'g', now() - interval '2 hours', 'old')");

        Reply r = seekPartition("g", "seek_part", "a", "");
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("success", "consumerGroup", "queueName", "partitionName", "seekToEnd", "targetTimestamp",
                "updated"), keys(r.json()));
        assertEquals("a", r.json().get("partitionName").asText());
        assertTrue(r.json().get("seekToEnd").asBoolean(), "an empty body means toEnd");
        assertTrue(r.json().get("updated").asBoolean());
        assertEquals("0", query("SELECT count(*) FROM queen.consumer_watermarks w JOIN queen.queues q ON q.id = w.queue_id"
                + " WHERE q.name = 'seek_part'"), "the empty-scan watermark is dropped");
        String repair = "SELECT coalesce(partition_name, '<queue>') || '|' || reason FROM queen.hotlist_repairs"
                + " WHERE queue_name = 'seek_part' AND consumer_group = 'g'";
        assertEquals("a|seek-partition", query(repair));
        assertEquals("0", query("SELECT count(*) FROM queen.hotlist_repairs WHERE queue_name = 'stale_queue'"),
                "repairs older than an hour are pruned by the writer");

        Reply served = pop("seek_part", "g", "&partitions=10");
        assertEquals(List.of("from-b"), data(served));
        ackAll(served, "g");
        assertEquals(204, pop("seek_part", "g", "").status());

        Reply back = seekPartition("g", "seek_part", "b", "{\"timestamp\":\"1970-01-01T00:00:00Z\"}");
        assertEquals(200, back.status(), back.body());
        assertFalse(back.json().get("seekToEnd").asBoolean());
        assertEquals("<queue>|seek-partition", query(repair), "a second partition widens the repair to the queue");
        assertEquals(List.of("from-b"), data(pop("seek_part", "g", "")));

        Reply unknown = seekPartition("g", "seek_part", "nope", "");
        assertEquals(404, unknown.status());
        assertEquals(List.of("success", "error"), keys(unknown.json()));
        assertFalse(unknown.json().get("success").asBoolean());
        assertEquals("Partition not found", unknown.json().get("error").asText());
        assertEquals(404, seekPartition("g", "no_such_queue", "a", "{\"toEnd\":true}").status());

        assertEquals(200, seek("g", "seek_part", "{\"toEnd\":true}").status());
        assertEquals("<queue>|seek-queue", query(repair));
    }

    @Test
    void badSeeksAreA400AndUnknownQueuesA404() {
        push("seek_bad", "p", "1");
        for (String body : List.of("{}", "", "{\"toEnd\":false}", "{\"timestamp\":\"\"}")) {
            Reply r = seek("g", "seek_bad", body);
            assertEquals(400, r.status(), body);
            // The reference's one field, plus the stable code every error answer carries.
            assertEquals(List.of("error", "code"), keys(r.json()));
            assertEquals("Must specify toEnd=true or a timestamp", r.json().get("error").asText(), body);
        }
        assertEquals(400, seek("g", "seek_bad", "{not json").status());
        assertEquals(400, seek("g", "seek_bad", "{\"timestamp\":\"yesterday\"}").status());
        assertEquals(400, seek("g", "seek_bad", "{\"toEnd\":\"yes\"}").status());
        assertEquals(400, seekPartition("g", "seek_bad", "p", "{}").status(), "a present body still needs a target");

        Reply unknown = seek("g", "no_such_queue", "{\"toEnd\":true}");
        assertEquals(404, unknown.status());
        JsonNode body = unknown.json();
        assertFalse(body.get("success").asBoolean());
        assertEquals("Queue not found or has no partitions", body.get("error").asText());
        assertEquals("g", body.get("consumerGroup").asText());
        assertEquals("no_such_queue", body.get("queueName").asText());
        assertEquals(0, body.get("partitionsUpdated").asInt());
    }

    @Test
    void aSubscriptionMoveReseedsOnlyUntouchedPartitions() throws Exception {
        push("sub_move", "p1", "\"old\"");
        Reply first = pop("sub_move", "subs", "");
        assertEquals(List.of("old"), data(first));
        ackAll(first, "subs");
        BrokerFixture.sql(db, "INSERT INTO queen.consumer_watermarks (queue_id, consumer_group, last_empty_scan_at)"
                + " SELECT id, 'subs', now() FROM queen.queues WHERE name = 'sub_move'");

        Reply r = http.post("/api/v1/consumer-groups/subs/subscription",
                "{\"subscriptionTimestamp\":\"2999-01-01T00:00:00Z\"}");
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("success", "consumerGroup", "newTimestamp", "rowsUpdated"), keys(r.json()));
        assertTrue(r.json().get("success").asBoolean());
        assertEquals("subs", r.json().get("consumerGroup").asText());
        assertEquals("2999-01-01T00:00:00Z", r.json().get("newTimestamp").asText());
        assertEquals(1, r.json().get("rowsUpdated").asInt());
        assertEquals("2999", query("SELECT extract(year FROM subscription_timestamp)::int FROM"
                + " queen.consumer_groups_metadata WHERE consumer_group = 'subs'"));
        assertEquals("0", query("SELECT count(*) FROM queen.consumer_watermarks WHERE consumer_group = 'subs'"));
        assertEquals("0", query("SELECT c.committed FROM queen.log_consumers c JOIN queen.log_partitions p"
                + " ON p.id = c.partition_id WHERE p.name = 'p1' AND c.consumer_group = 'subs'"),
                "the existing cursor does not move");

        push("sub_move", "p2", "\"before-first-contact\"");
        assertEquals(204, pop("sub_move", "subs", "").status(), "a new partition seeds from the moved timestamp");
        push("sub_move", "p1", "\"later\"");
        assertEquals(List.of("later"), data(pop("sub_move", "subs", "")), "the untouched cursor keeps delivering");

        assertEquals(0, http.post("/api/v1/consumer-groups/nobody/subscription",
                "{\"subscriptionTimestamp\":\"2020-01-01T00:00:00Z\"}").json().get("rowsUpdated").asInt());
        for (String body : List.of("{}", "", "{\"subscriptionTimestamp\":\"\"}")) {
            Reply bad = http.post("/api/v1/consumer-groups/subs/subscription", body);
            assertEquals(400, bad.status(), body);
            assertEquals("subscriptionTimestamp is required", bad.json().get("error").asText());
        }
        assertEquals(400, http.post("/api/v1/consumer-groups/subs/subscription",
                "{\"subscriptionTimestamp\":\"soon\"}").status());
    }
}
