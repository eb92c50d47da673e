package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumer-group listing, lagging, detail and delete over real HTTP on a real PostgreSQL. The broker
 * runs with the tenancy header on, so requests without it are the default tenant and the isolation
 * test can use two tenants with the same names.
 */
class ConsumerGroupAdminIT {
    static final String A = "aaaaaaaa-0000-4000-8000-0000000000c1";
    static final String B = "bbbbbbbb-0000-4000-8000-0000000000c2";
    static final ObjectMapper MAPPER = new ObjectMapper();
    static DatabaseSettings db;
    static Broker broker;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("cg_admin");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true"));
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

    static void push(String tenant, String queue, String partition, int count) {
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < count; i++) {
            if (!items.isEmpty()) {
                items.append(',');
            }
            items.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"").append(partition)
                    .append("\",\"payload\":{\"n\":").append(i).append("}}");
        }
        Reply r = call(tenant, "POST", "/api/v1/push", "{\"items\":[" + items + "]}");
        assertEquals(201, r.status(), r.body());
    }

    /** A queue-level pop of a group; the reply's messages, or none on 204. */
    static JsonNode pop(String tenant, String queue, String query) {
        Reply r = call(tenant, "GET", "/api/v1/pop/queue/" + queue + "?" + query, null);
        if (r.status() == 204) {
            return MAPPER.createArrayNode();
        }
        assertEquals(200, r.status(), r.body());
        return r.json().get("messages");
    }

    static String query(String sql) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : "<no row>";
        }
    }

    static String cursorsOf(String group, String queue) throws SQLException {
        return query("SELECT count(*) FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE c.consumer_group = '" + group + "' AND q.name = '"
                + queue + "'");
    }

    static String registrationsOf(String group, String queue) throws SQLException {
        return query("SELECT count(*) FROM queen.consumer_groups_metadata m JOIN queen.queues q ON q.id = m.queue_id"
                + " WHERE m.consumer_group = '" + group + "' AND q.name = '" + queue + "'");
    }

    /** The listing's entry for (group, queue), or null. */
    static JsonNode entry(JsonNode listing, String group, String queue) {
        for (JsonNode e : listing) {
            if (e.get("name").asText().equals(group) && e.get("queueName").asText().equals(queue)) {
                return e;
            }
        }
        return null;
    }

    static List<String> keys(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void theListingReportsOneEntryPerGroupAndQueueWithItsLag() {
        push(null, "cg_list", "p1", 5);
        push(null, "cg_list", "p2", 3);
        assertEquals(8, pop(null, "cg_list", "consumerGroup=g&subscriptionMode=all&batch=10&partitions=2&autoAck=true")
                .size());
        assertEquals(0, pop(null, "cg_list", "consumerGroup=fresh&subscriptionMode=new&batch=10").size(),
                "mode new seeds at the end");
        push(null, "cg_list", "p1", 3);
        push(null, "cg_list", "p2", 1);

        Reply r = get("/api/v1/consumer-groups");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().isArray());
        JsonNode g = entry(r.json(), "g", "cg_list");
        assertEquals(List.of("name", "topics", "queueName", "members", "partitionCursors", "partitionsWithLag",
                "totalLag", "maxTimeLag", "state", "storage", "subscriptionMode", "subscriptionTimestamp",
                "subscriptionCreatedAt", "conflation"), keys(g));
        assertEquals("[\"cg_list\"]", g.get("topics").toString());
        assertEquals(2, g.get("members").asInt());
        assertEquals(2, g.get("partitionCursors").asInt());
        assertEquals(2, g.get("partitionsWithLag").asInt());
        assertEquals(4, g.get("totalLag").asLong(), "3 new on p1 + 1 new on p2");
        assertTrue(g.get("maxTimeLag").asInt() < 300, g.toString());
        assertEquals("Stable", g.get("state").asText());
        assertEquals("segments", g.get("storage").asText());
        assertEquals("all", g.get("subscriptionMode").asText());
        assertEquals("1970-01-01T00:00:00.000000Z", g.get("subscriptionTimestamp").asText());
        assertFalse(g.get("subscriptionCreatedAt").isNull());
        assertFalse(g.get("conflation").asBoolean());

        JsonNode fresh = entry(r.json(), "fresh", "cg_list");
        assertEquals(4, fresh.get("totalLag").asLong());
        assertEquals("Dead", fresh.get("state").asText(), "never consumed anything");
        assertEquals("new", fresh.get("subscriptionMode").asText());

        // Retention deleted p1 below offset 6: frames it removed are not lag (offsets 6 and 7 remain).
        BrokerFixture.sql(db, "UPDATE queen.log_partitions SET log_start = 6 WHERE name = 'p1'"
                + " AND queue_id = (SELECT id FROM queen.queues WHERE name = 'cg_list')");
        JsonNode after = entry(get("/api/v1/consumer-groups").json(), "g", "cg_list");
        assertEquals(3, after.get("totalLag").asLong(), "p1: 7 - max(4, 6 - 1) = 2, p2: 1");
    }

    @Test
    void laggingListsTheCursorsWhoseOldestUnconsumedMessageIsOlderThanTheThreshold() {
        push(null, "cg_lag", "p", 2);
        assertEquals(1, pop(null, "cg_lag", "consumerGroup=slow&subscriptionMode=all&batch=1&autoAck=true").size());
        BrokerFixture.sql(db, "UPDATE queen.log_segments SET created_at = now() - interval '2 hours' WHERE partition_id"
                + " IN (SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = 'cg_lag')");

        Reply r = get("/api/v1/consumer-groups/lagging?minLagSeconds=3600");
        assertEquals(200, r.status(), r.body());
        JsonNode row = null;
        for (JsonNode l : r.json()) {
            if (l.get("queue_name").asText().equals("cg_lag")) {
                row = l;
            }
        }
        assertTrue(row != null, r.body());
        assertEquals(List.of("consumer_group", "queue_name", "partition_name", "partition_id", "worker_id", "offset_lag",
                "time_lag_seconds", "lag_hours", "oldest_unconsumed_at", "last_consumed_at"), keys(row));
        assertEquals("slow", row.get("consumer_group").asText());
        assertEquals("p", row.get("partition_name").asText());
        assertEquals(1, row.get("offset_lag").asLong());
        int lag = row.get("time_lag_seconds").asInt();
        assertTrue(lag >= 7200 && lag < 7200 + 600, "about two hours: " + lag);
        assertEquals(2.0, row.get("lag_hours").asDouble(), 0.2);
        assertTrue(row.get("last_consumed_at").isNull());
        assertFalse(row.get("oldest_unconsumed_at").isNull());

        assertTrue(get("/api/v1/consumer-groups/lagging").body().contains("cg_lag"), "3600 s is the default");
        assertFalse(get("/api/v1/consumer-groups/lagging?minLagSeconds=99999").body().contains("cg_lag"));
        assertEquals(400, get("/api/v1/consumer-groups/lagging?minLagSeconds=soon").status());

        JsonNode slow = entry(get("/api/v1/consumer-groups").json(), "slow", "cg_lag");
        assertEquals("Lagging", slow.get("state").asText());
        assertTrue(slow.get("maxTimeLag").asInt() >= 7200);
    }

    @Test
    void theDetailOfAGroupFoldsItsCursorsPerQueue() {
        push(null, "cg_detail", "a", 3);
        push(null, "cg_detail", "b", 2);
        assertEquals(5, pop(null, "cg_detail", "consumerGroup=d&subscriptionMode=all&batch=10&partitions=2&autoAck=true")
                .size());
        push(null, "cg_detail", "a", 1);
        Reply leased = call(null, "GET", "/api/v1/pop/queue/cg_detail?consumerGroup=d&batch=1&leaseSeconds=300", null);
        assertEquals(200, leased.status(), leased.body());

        Reply r = get("/api/v1/consumer-groups/d");
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("cg_detail"), keys(r.json()));
        JsonNode q = r.json().get("cg_detail");
        assertEquals(List.of("conflation", "partitions"), keys(q));
        assertFalse(q.get("conflation").asBoolean());
        JsonNode a = q.get("partitions").get(0);
        JsonNode b = q.get("partitions").get(1);
        assertEquals(List.of("partition", "workerId", "lastConsumedAt", "totalConsumed", "offsetLag", "timeLagSeconds",
                "leaseActive"), keys(a));
        assertEquals("a", a.get("partition").asText());
        assertEquals(leased.json().get("leaseId").asText(), a.get("workerId").asText());
        assertTrue(a.get("lastConsumedAt").isNull());
        assertEquals(3, a.get("totalConsumed").asLong());
        assertEquals(1, a.get("offsetLag").asLong(), "a lease is not consumption");
        assertTrue(a.get("leaseActive").asBoolean());
        assertEquals("b", b.get("partition").asText());
        assertEquals(2, b.get("totalConsumed").asLong());
        assertEquals(0, b.get("offsetLag").asLong());
        assertEquals(0, b.get("timeLagSeconds").asInt());
        assertFalse(b.get("leaseActive").asBoolean());
        assertTrue(b.get("workerId").isNull());

        Reply none = get("/api/v1/consumer-groups/nobody");
        assertEquals(200, none.status());
        assertEquals("{}", none.body());
    }

    @Test
    void deletingAGroupRemovesItsCursorsOnEveryQueueAndItsNextPopReseedsFromItsSubscription() throws Exception {
        push(null, "cg_del1", "p", 2);
        push(null, "cg_del2", "p", 2);
        assertEquals(2, pop(null, "cg_del1", "consumerGroup=x&subscriptionMode=all&batch=10&autoAck=true").size());
        assertEquals(2, pop(null, "cg_del2", "consumerGroup=x&subscriptionMode=all&batch=10&autoAck=true").size());
        BrokerFixture.sql(db, "INSERT INTO queen.consumer_watermarks (queue_id, consumer_group, last_empty_scan_at)"
                + " SELECT id, 'x', now() FROM queen.queues WHERE name IN ('cg_del1', 'cg_del2')");

        Reply r = call(null, "DELETE", "/api/v1/consumer-groups/x", null);
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("success", "consumerGroup", "deletedPartitions", "metadataDeleted"), keys(r.json()));
        assertTrue(r.json().get("success").asBoolean());
        assertEquals("x", r.json().get("consumerGroup").asText());
        assertEquals(2, r.json().get("deletedPartitions").asInt());
        assertTrue(r.json().get("metadataDeleted").asBoolean(), "deleteMetadata defaults to true");

        assertEquals("0", cursorsOf("x", "cg_del1"));
        assertEquals("0", cursorsOf("x", "cg_del2"));
        assertEquals("0", registrationsOf("x", "cg_del1"));
        assertEquals("0", query("SELECT count(*) FROM queen.consumer_watermarks WHERE consumer_group = 'x'"));
        assertEquals("cg_del1,cg_del2", query("SELECT string_agg(queue_name || '', ',' ORDER BY queue_name)"
                + " FROM queen.hotlist_repairs WHERE consumer_group = 'x' AND reason = 'consumer-group-delete'"
                + " AND partition_name IS NULL"));
        assertEquals("{}", get("/api/v1/consumer-groups/x").body());

        // The next pop registers the group again and seeds its cursors from the subscription it asks for.
        assertEquals(2, pop(null, "cg_del1", "consumerGroup=x&subscriptionMode=all&batch=10").size(),
                "mode all re-reads from the oldest retained message");
        assertEquals("1", registrationsOf("x", "cg_del1"), "the group registered again");
        assertEquals(0, pop(null, "cg_del2", "consumerGroup=x&subscriptionMode=new&batch=10").size(),
                "mode new starts at the end");
        assertEquals("new", query("SELECT m.subscription_mode FROM queen.consumer_groups_metadata m"
                + " JOIN queen.queues q ON q.id = m.queue_id WHERE m.consumer_group = 'x' AND q.name = 'cg_del2'"));
        assertEquals("1", cursorsOf("x", "cg_del2"));
    }

    @Test
    void deletingAGroupOnOneQueueLeavesItsOtherQueuesAndCanKeepItsRegistration() throws Exception {
        push(null, "cg_one1", "p", 1);
        push(null, "cg_one2", "p", 1);
        assertEquals(1, pop(null, "cg_one1", "consumerGroup=y&subscriptionMode=all&batch=10&autoAck=true").size());
        assertEquals(1, pop(null, "cg_one2", "consumerGroup=y&subscriptionMode=all&batch=10&autoAck=true").size());

        Reply r = call(null, "DELETE", "/api/v1/consumer-groups/y/queues/cg_one1?deleteMetadata=false", null);
        assertEquals(200, r.status(), r.body());
        assertEquals(List.of("success", "consumerGroup", "queueName", "deletedPartitions", "metadataDeleted"),
                keys(r.json()));
        assertEquals("cg_one1", r.json().get("queueName").asText());
        assertEquals(1, r.json().get("deletedPartitions").asInt());
        assertFalse(r.json().get("metadataDeleted").asBoolean());

        assertEquals("0", cursorsOf("y", "cg_one1"));
        assertEquals("1", cursorsOf("y", "cg_one2"), "the other queue keeps its cursor");
        assertEquals("1", registrationsOf("y", "cg_one1"), "the registration was kept");
        assertEquals("cg_one1", query("SELECT string_agg(queue_name, ',') FROM queen.hotlist_repairs"
                + " WHERE consumer_group = 'y'"));
        // The kept registration (mode all, from the epoch) decides the re-seed, not the pop's own mode.
        assertEquals(1, pop(null, "cg_one1", "consumerGroup=y&subscriptionMode=new&batch=10").size());
        assertEquals(0, pop(null, "cg_one2", "consumerGroup=y&subscriptionMode=all&batch=10").size());

        Reply unknown = call(null, "DELETE", "/api/v1/consumer-groups/y/queues/no_such_queue", null);
        assertEquals(200, unknown.status(), unknown.body());
        assertEquals(0, unknown.json().get("deletedPartitions").asInt());
        assertEquals(400, call(null, "DELETE", "/api/v1/consumer-groups/y?deleteMetadata=perhaps", null).status());
    }

    @Test
    void tenantsSeeAndDeleteOnlyTheirOwnGroups() throws Exception {
        push(A, "cg_orders", "p", 3);
        push(B, "cg_orders", "p", 1);
        assertEquals(1, pop(A, "cg_orders", "consumerGroup=shared&subscriptionMode=all&batch=1&autoAck=true").size());
        assertEquals(1, pop(B, "cg_orders", "consumerGroup=shared&subscriptionMode=all&batch=1&autoAck=true").size());

        assertEquals(2, entry(call(A, "GET", "/api/v1/consumer-groups", null).json(), "shared", "cg_orders")
                .get("totalLag").asLong());
        assertEquals(0, entry(call(B, "GET", "/api/v1/consumer-groups", null).json(), "shared", "cg_orders")
                .get("totalLag").asLong());
        assertNull(entry(get("/api/v1/consumer-groups").json(), "shared", "cg_orders"), "the default tenant has none");
        assertEquals(2, call(A, "GET", "/api/v1/consumer-groups/shared", null).json().get("cg_orders")
                .get("partitions").get(0).get("offsetLag").asLong());

        Reply deleted = call(A, "DELETE", "/api/v1/consumer-groups/shared", null);
        assertEquals(1, deleted.json().get("deletedPartitions").asInt(), deleted.body());
        assertEquals("{}", call(A, "GET", "/api/v1/consumer-groups/shared", null).body());
        JsonNode stillB = call(B, "GET", "/api/v1/consumer-groups/shared", null).json();
        assertEquals(0, stillB.get("cg_orders").get("partitions").get(0).get("offsetLag").asLong(),
                "B's cursor survived A's delete");
        assertEquals("1", cursorsOf("shared", "cg_orders"), "only B's cursor is left");
        assertEquals("1", registrationsOf("shared", "cg_orders"), "only B's registration is left");
    }
}
