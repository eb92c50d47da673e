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

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resources routes, queue delete and partition discovery over real HTTP, with tenancy on: the
 * listings' shapes, a delete that removes every row of one queue and nothing of any other, and
 * tenants that cannot reach each other's queues.
 */
class QueueResourcesIT {
    static final String A = "aaaaaaaa-1111-4000-8000-00000000000a";
    static final String B = "bbbbbbbb-2222-4000-8000-00000000000b";
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final String TS = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z";
    static DatabaseSettings db;
    static Broker broker;

    @BeforeAll
    static void start() throws Exception {
        db = TestPostgres.freshDatabase("queue_resources");
        // The periodic jobs run once soon after boot (within JobLoop.FIRST_TICK_SPREAD_MS, at a random
        // moment) and not again during the tests: a stats refresh between the delete test's two counts
        // once added the neighbour's stats rows. So the tests start after that first refresh, which
        // always writes the system row.
        String hour = "3600000";
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "STATS_INTERVAL_MS", hour, "METRICS_FLUSH_MS", hour, "RETENTION_INTERVAL", hour,
                "RETAINED_BYTES_INTERVAL_MS", hour));
        await().atMost(Duration.ofSeconds(30)).until(() -> count("SELECT count(*) FROM queen.stats WHERE stat_type = 'system'") > 0);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply call(String tenant, String method, String path, String body) {
        return new HttpProbe(broker.port()).call(tenant, method, path, body);
    }

    static JsonNode ok(Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static void push(String tenant, String queue, String partition, int count) {
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < count; i++) {
            items.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(queue).append("\",\"partition\":\"")
                    .append(partition).append("\",\"payload\":{\"n\":").append(i).append("}}");
        }
        Reply r = call(tenant, "POST", "/api/v1/push", "{\"items\":[" + items + "]}");
        assertEquals(201, r.status(), r.body());
    }

    static JsonNode pop(String tenant, String queue, String query) {
        return ok(call(tenant, "GET", "/api/v1/pop/queue/" + queue + "?" + query, null));
    }

    static void ack(String tenant, JsonNode message, String status, String group) {
        Reply r = call(tenant, "POST", "/api/v1/ack", "{\"transactionId\":\"" + message.get("transactionId").asText()
                + "\",\"partitionId\":\"" + message.get("partitionId").asText() + "\",\"leaseId\":\""
                + message.get("leaseId").asText() + "\",\"status\":\"" + status + "\""
                + (group == null ? "" : ",\"consumerGroup\":\"" + group + "\"") + "}");
        assertTrue(ok(r).get(0).get("success").asBoolean(), r.body());
    }

    static TreeSet<String> keys(JsonNode node) {
        TreeSet<String> out = new TreeSet<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static TreeSet<String> set(String... names) {
        return new TreeSet<>(List.of(names));
    }

    // ---------------------------------------------------------------- rows of one queue, table by table

    record QueueRows(UUID queueId, UUID[] partitionIds) {
    }

    static QueueRows identify(String tenant, String queue) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT q.id, array_agg(p.id) FILTER (WHERE p.id IS NOT NULL)"
                     + " FROM queen.queues q LEFT JOIN queen.log_partitions p ON p.queue_id = q.id"
                     + " WHERE q.tenant_id = ?::uuid AND q.name = ? GROUP BY q.id")) {
            ps.setString(1, tenant);
            ps.setString(2, queue);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no queue " + queue + " for tenant " + tenant);
                Array ids = rs.getArray(2);
                return new QueueRows(rs.getObject(1, UUID.class), ids == null ? new UUID[0] : (UUID[]) ids.getArray());
            }
        }
    }

    /** Rows that reference the queue, its name or its partitions, per table. */
    static Map<String, Long> rows(String tenant, String queue, QueueRows q) throws SQLException {
        Map<String, String> byTable = new LinkedHashMap<>();
        byTable.put("queues", "SELECT count(*) FROM queen.queues WHERE id = ?1");
        byTable.put("log_partitions", "SELECT count(*) FROM queen.log_partitions WHERE queue_id = ?1");
        byTable.put("log_segments", "SELECT count(*) FROM queen.log_segments WHERE partition_id = ANY (?2)");
        byTable.put("log_txns", "SELECT count(*) FROM queen.log_txns WHERE partition_id = ANY (?2)");
        byTable.put("log_consumers", "SELECT count(*) FROM queen.log_consumers WHERE partition_id = ANY (?2)");
        byTable.put("log_dlq", "SELECT count(*) FROM queen.log_dlq WHERE partition_id = ANY (?2)");
        byTable.put("retention_history", "SELECT count(*) FROM queen.retention_history WHERE partition_id = ANY (?2)");
        byTable.put("streams_state", "SELECT count(*) FROM queen_streams.state WHERE partition_id = ANY (?2)");
        byTable.put("consumer_groups_metadata", "SELECT count(*) FROM queen.consumer_groups_metadata WHERE queue_id = ?1");
        byTable.put("consumer_watermarks", "SELECT count(*) FROM queen.consumer_watermarks WHERE queue_id = ?1");
        byTable.put("queue_lag_metrics", "SELECT count(*) FROM queen.queue_lag_metrics WHERE queue_id = ?1");
        byTable.put("stats", "SELECT count(*) FROM queen.stats WHERE queue_id = ?1");
        byTable.put("hotlist_repairs", "SELECT count(*) FROM queen.hotlist_repairs WHERE tenant_id = ?3 AND queue_name = ?4");
        byTable.put("queue_parked_replica",
                "SELECT count(*) FROM queen.queue_parked_replica WHERE tenant_id = ?3 AND queue_name = ?4");
        Map<String, Long> out = new LinkedHashMap<>();
        try (Connection c = TestPostgres.connect(db)) {
            for (Map.Entry<String, String> e : byTable.entrySet()) {
                // ?1 queue id, ?2 partition ids, ?3 tenant, ?4 queue name: bound in order of appearance.
                String sql = e.getValue();
                List<Object> binds = new ArrayList<>();
                StringBuilder jdbc = new StringBuilder();
                for (int i = 0; i < sql.length(); i++) {
                    if (sql.charAt(i) == '?') {
                        char which = sql.charAt(++i);
                        binds.add(switch (which) {
                            case '1' -> q.queueId();
                            case '2' -> c.createArrayOf("uuid", q.partitionIds());
                            case '3' -> UUID.fromString(tenant);
                            default -> queue;
                        });
                        jdbc.append('?');
                    } else {
                        jdbc.append(sql.charAt(i));
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(jdbc.toString())) {
                    for (int i = 0; i < binds.size(); i++) {
                        ps.setObject(i + 1, binds.get(i));
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        out.put(e.getKey(), rs.getLong(1));
                    }
                }
            }
        }
        return out;
    }

    static void sql(String statement, Object... binds) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(statement)) {
            for (int i = 0; i < binds.length; i++) {
                ps.setObject(i + 1, binds[i]);
            }
            ps.execute();
        }
    }

    /**
     * Gives the queue rows in every table that can hold one: pushes to two partitions, a consumer
     * group's delivery and ack, a dead letter (retry limit 0), and the rows the maintenance jobs
     * and seeks write (stats, lag metrics, retention history, parked replicas, repairs, watermarks,
     * streams state).
     */
    static QueueRows populate(String tenant, String queue) throws SQLException {
        ok(call(tenant, "POST", "/api/v1/configure", "{\"queue\":\"" + queue + "\",\"options\":{\"retryLimit\":0}}"));
        push(tenant, queue, "p1", 2);
        push(tenant, queue, "p2", 1);
        JsonNode grouped = pop(tenant, queue, "consumerGroup=g&subscriptionMode=all&batch=10");
        ack(tenant, grouped.get("messages").get(0), "completed", "g");
        JsonNode queueMode = pop(tenant, queue, "batch=1");
        ack(tenant, queueMode.get("messages").get(0), "failed", null);

        QueueRows q = identify(tenant, queue);
        UUID t = UUID.fromString(tenant);
        sql("INSERT INTO queen.consumer_watermarks (queue_id, consumer_group) VALUES (?, 'g') ON CONFLICT DO NOTHING",
                q.queueId());
        sql("INSERT INTO queen.stats (stat_type, stat_key, queue_id, pending_messages) VALUES ('queue', ?, ?, 3)"
                + " ON CONFLICT DO NOTHING", q.queueId().toString(), q.queueId());
        sql("INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id, pop_count)"
                + " VALUES (date_trunc('minute', now()) - interval '1 hour', ?, 1) ON CONFLICT DO NOTHING", q.queueId());
        sql("INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type) VALUES (?, 1, 'retention')",
                q.partitionIds()[0]);
        sql("INSERT INTO queen.queue_parked_replica (bucket_time, queue_name, hostname, worker_id, tenant_id)"
                + " VALUES (now(), ?, 'host', 1, ?)", queue, t);
        sql("INSERT INTO queen.hotlist_repairs (tenant_id, queue_name, consumer_group, reason) VALUES (?, ?, 'g', 'test')",
                t, queue);
        sql("INSERT INTO queen_streams.queries (name, source_queue, config_hash, tenant_id) VALUES (?, ?, 'h', ?)",
                "q-" + queue + "-" + tenant, queue, t);
        sql("INSERT INTO queen_streams.state (query_id, partition_id, key, value)"
                + " SELECT id, ?, 'k', '1' FROM queen_streams.queries WHERE name = ?",
                q.partitionIds()[0], "q-" + queue + "-" + tenant);
        return q;
    }

    // ---------------------------------------------------------------- delete

    @Test
    void deletingAQueueRemovesEveryRowOfItAndNothingOfAnyOtherQueue() throws Exception {
        QueueRows doomed = populate(A, "doomed");
        QueueRows neighbour = populate(A, "neighbour");
        QueueRows twin = populate(B, "doomed");
        Map<String, Long> before = rows(A, "doomed", doomed);
        Map<String, Long> neighbourBefore = rows(A, "neighbour", neighbour);
        Map<String, Long> twinBefore = rows(B, "doomed", twin);
        before.forEach((table, n) -> assertTrue(n > 0, "the test must give " + table + " a row: " + before));
        neighbourBefore.forEach((table, n) -> assertTrue(n > 0, "neighbour " + table + ": " + neighbourBefore));
        twinBefore.forEach((table, n) -> assertTrue(n > 0, "twin " + table + ": " + twinBefore));

        JsonNode deleted = ok(call(A, "DELETE", "/api/v1/resources/queues/doomed", null));
        assertTrue(deleted.get("deleted").asBoolean());
        assertTrue(deleted.get("existed").asBoolean());
        assertEquals("doomed", deleted.get("queue").asText());
        assertFalse(deleted.has("message"));

        rows(A, "doomed", doomed).forEach((table, n) -> assertEquals(0L, n, table + " still holds rows of the queue"));
        assertEquals(neighbourBefore, rows(A, "neighbour", neighbour), "another queue of the tenant is untouched");
        assertEquals(twinBefore, rows(B, "doomed", twin), "the same name in another tenant is untouched");
        assertEquals(404, call(A, "GET", "/api/v1/resources/queues/doomed", null).status());
        assertEquals(200, call(B, "GET", "/api/v1/resources/queues/doomed", null).status());
    }

    @Test
    void aSecondDeleteAnswers200WithExistedFalse() {
        push(A, "twice", "p", 1);
        assertTrue(ok(call(A, "DELETE", "/api/v1/resources/queues/twice", null)).get("existed").asBoolean());
        JsonNode again = ok(call(A, "DELETE", "/api/v1/resources/queues/twice", null));
        assertFalse(again.get("deleted").asBoolean());
        assertFalse(again.get("existed").asBoolean());
        assertEquals("twice", again.get("queue").asText());
        assertEquals("Queue not found, nothing was deleted", again.get("message").asText());
    }

    @Test
    void aDeletedQueueComesBackNewOnTheNextPush() throws Exception {
        push(A, "phoenix", "p", 2);
        UUID first = identify(A, "phoenix").queueId();
        ok(call(A, "DELETE", "/api/v1/resources/queues/phoenix", null));
        push(A, "phoenix", "p", 1);
        QueueRows reborn = identify(A, "phoenix");
        assertNotEquals(first, reborn.queueId());
        JsonNode popped = pop(A, "phoenix", "batch=10");
        assertEquals(1, popped.get("messages").size(), "only the message pushed after the delete");
    }

    // ---------------------------------------------------------------- tenancy

    @Test
    void anotherTenantCannotSeeConfigureOrDeleteTheQueue() throws Exception {
        ok(call(A, "POST", "/api/v1/configure", "{\"queue\":\"private\",\"options\":{\"leaseTime\":11}}"));
        push(A, "private", "p", 2);

        assertEquals(404, call(B, "GET", "/api/v1/resources/queues/private", null).status());
        assertEquals(404, call(B, "GET", "/api/v1/resources/queues/private/depth", null).status());
        assertEquals(404, call(null, "GET", "/api/v1/resources/queues/private", null).status());
        for (JsonNode q : ok(call(B, "GET", "/api/v1/resources/queues", null)).get("queues")) {
            assertNotEquals("private", q.get("name").asText());
        }

        JsonNode notB = ok(call(B, "DELETE", "/api/v1/resources/queues/private", null));
        assertFalse(notB.get("existed").asBoolean());
        assertEquals(200, call(A, "GET", "/api/v1/resources/queues/private", null).status());

        // B's configure of the name makes B's own queue; A's keeps its options and messages.
        JsonNode bQueue = ok(call(B, "POST", "/api/v1/configure", "{\"queue\":\"private\",\"options\":{\"leaseTime\":99}}"));
        JsonNode aDetail = ok(call(A, "GET", "/api/v1/resources/queues/private", null));
        assertNotEquals(aDetail.get("id").asText(), bQueue.get("queueId").asText());
        assertEquals(11, aDetail.get("options").get("leaseTime").asInt());
        assertEquals(2, aDetail.get("totals").get("total").asInt());
        assertEquals(0, ok(call(B, "GET", "/api/v1/resources/queues/private", null)).get("totals").get("total").asInt());

        Reply badTenant = call("not-a-uuid", "GET", "/api/v1/resources/queues", null);
        assertEquals(400, badTenant.status());
    }

    // ---------------------------------------------------------------- listings

    @Test
    void theListingsHaveTheSpecShapes() {
        push(A, "shape.list", "p1", 2);
        push(A, "shape.list", "p2", 1);
        JsonNode leased = pop(A, "shape.list", "consumerGroup=g&subscriptionMode=all&batch=10");
        int leasedCount = leased.get("messages").size();
        assertTrue(leasedCount > 0);

        JsonNode list = ok(call(A, "GET", "/api/v1/resources/queues", null));
        assertEquals(set("queues", "kvRows", "kvBytes", "timerRows", "timerBytes"), keys(list));
        JsonNode entry = null;
        for (JsonNode q : list.get("queues")) {
            if (q.get("name").asText().equals("shape.list")) {
                entry = q;
            }
        }
        assertTrue(entry != null, list.toString());
        assertEquals(set("id", "name", "namespace", "task", "createdAt", "partitions", "retainedBytes", "segments",
                "messages"), keys(entry));
        assertEquals("shape", entry.get("namespace").asText());
        assertEquals("list", entry.get("task").asText());
        assertTrue(entry.get("createdAt").asText().matches(TS), entry.toString());
        assertEquals(2, entry.get("partitions").asInt());
        assertEquals(set("segments", "messages"), keys(entry.get("segments")));
        assertEquals(set("total", "pending", "processing"), keys(entry.get("messages")));
        assertEquals(3, entry.get("messages").get("total").asInt(), "live: retained frames");
        JsonNode cached = ok(call(A, "GET", "/api/v1/resources/queues?stats=cached", null));
        assertEquals(list.get("queues").size(), cached.get("queues").size());
        assertEquals(keys(entry), keys(cached.get("queues").get(0)));

        JsonNode detail = ok(call(A, "GET", "/api/v1/resources/queues/shape.list", null));
        assertEquals(set("id", "name", "namespace", "task", "createdAt", "options", "partitions", "totals",
                "retainedBytes", "segments"), keys(detail));
        assertEquals(2, detail.get("partitions").size());
        JsonNode p1 = detail.get("partitions").get(0);
        assertEquals("p1", p1.get("name").asText());
        assertEquals(set("id", "name", "createdAt", "stats", "oldestMessage", "newestMessage"), keys(p1));
        assertEquals(set("total", "pending", "processing", "completed", "failed", "deadLetter"), keys(p1.get("stats")));
        assertTrue(p1.get("stats").get("failed").isNull());
        assertTrue(p1.get("oldestMessage").asText().matches(TS));
        JsonNode totals = detail.get("totals");
        assertEquals(3, totals.get("total").asInt());
        assertEquals(3, totals.get("pending").asInt(), "nothing acked: all pending against the group's cursor");
        assertEquals(leasedCount, totals.get("processing").asInt(), "the leased batch is in flight");
        assertEquals(0, totals.get("completed").asInt());
        assertTrue(totals.get("failed").isNull());
        assertEquals(3, detail.get("segments").get("messages").asInt());
        assertEquals(2, detail.get("segments").get("segments").asInt());

        JsonNode depth = ok(call(A, "GET", "/api/v1/resources/queues/shape.list/depth", null));
        assertTrue(depth.get("group").isNull());
        assertEquals(3, depth.get("pending").asInt());
        assertEquals(2, depth.get("partitionsPending").asInt());
        assertFalse(depth.get("conflation").asBoolean());
        assertEquals(3, depth.get("effectivePending").asInt());
        assertEquals(set("partition", "pending", "processing", "ready"), keys(depth.get("partitions").get(0)));
        JsonNode stranger = ok(call(A, "GET", "/api/v1/resources/queues/shape.list/depth?group=never", null));
        assertEquals("never", stranger.get("group").asText());
        assertEquals(3, stranger.get("pending").asInt(), "a group without cursors owes the whole retained range");
        assertEquals(0, stranger.get("processing").asInt());

        Reply missing = call(A, "GET", "/api/v1/resources/queues/nope", null);
        assertEquals(404, missing.status());
        assertEquals("Queue not found", missing.json().get("error").asText());
        assertEquals(404, call(A, "GET", "/api/v1/resources/queues/nope/depth", null).status());

        JsonNode namespaces = ok(call(A, "GET", "/api/v1/resources/namespaces", null));
        JsonNode shape = find(namespaces.get("namespaces"), "namespace", "shape");
        assertEquals(set("namespace", "queues", "partitions", "messages"), keys(shape));
        assertEquals(1, shape.get("queues").asInt());
        assertEquals(2, shape.get("partitions").asInt());
        assertEquals(set("total", "pending"), keys(shape.get("messages")));
        JsonNode tasks = ok(call(A, "GET", "/api/v1/resources/tasks", null));
        assertEquals(2, find(tasks.get("tasks"), "task", "list").get("partitions").asInt());
        assertEquals(0, ok(call(B, "GET", "/api/v1/resources/namespaces", null)).get("namespaces").findValues("namespace")
                .stream().filter(n -> n.asText().equals("shape")).count(), "B does not see A's namespace");
    }

    @Test
    void theOverviewIsTheTenantsOwnForTheDefaultTenantToo() throws Exception {
        push(A, "over.view", "p", 1);
        JsonNode mine = ok(call(A, "GET", "/api/v1/resources/overview", null));
        assertEquals(set("queues", "partitions", "namespaces", "tasks", "messages", "lag", "throughput", "timestamp",
                "statsAge"), keys(mine));
        assertEquals(set("total", "pending", "processing", "completed", "failed", "deadLetter"), keys(mine.get("messages")));
        assertEquals(set("time", "offset"), keys(mine.get("lag")));
        assertEquals(set("avg", "median", "min", "max"), keys(mine.get("lag").get("time")));
        assertEquals(set("ingestedPerSecond", "processedPerSecond"), keys(mine.get("throughput")));
        assertTrue(mine.get("timestamp").asText().matches(TS));
        assertEquals(count("SELECT count(*) FROM queen.queues WHERE tenant_id = '" + A + "'"), mine.get("queues").asLong());

        push(null, "over.view.default", "p", 1);
        JsonNode defaults = ok(call(null, "GET", "/api/v1/resources/overview", null));
        assertEquals(count("SELECT count(*) FROM queen.queues WHERE tenant_id = '00000000-0000-0000-0000-000000000001'"),
                defaults.get("queues").asLong(), "with tenants, the default tenant's overview counts its own queues only");
        assertTrue(count("SELECT count(*) FROM queen.queues") > defaults.get("queues").asLong(),
                "other tenants' queues exist and are not counted");
        assertEquals(count("SELECT count(DISTINCT NULLIF(namespace, '')) FROM queen.queues"
                        + " WHERE tenant_id = '00000000-0000-0000-0000-000000000001'"),
                defaults.get("namespaces").asLong(), "nor their namespaces");
        JsonNode other = ok(call("cccccccc-3333-4000-8000-00000000000c", "GET", "/api/v1/resources/overview", null));
        assertEquals(0, other.get("queues").asInt());
        assertEquals(0, other.get("partitions").asInt());
    }

    // ---------------------------------------------------------------- partition discovery

    static JsonNode changed(String tenant, String entries) {
        return ok(call(tenant, "POST", "/api/v1/partitions/changed", "{\"entries\":[" + entries + "]}"));
    }

    @Test
    void partitionDiscoveryEnumeratesPagesAndFollowsWrites() {
        push(A, "disc", "a", 1);
        push(A, "disc", "b", 2);
        push(A, "disc", "c", 1);

        JsonNode first = changed(A, "{\"queue\":\"disc\",\"limit\":2}");
        assertEquals(set("safeTime", "safeTimeDegraded", "entries"), keys(first));
        assertTrue(first.get("safeTime").asText().matches(TS));
        assertFalse(first.get("safeTimeDegraded").asBoolean());
        assertTrue(Instant.parse(first.get("safeTime").asText()).isBefore(Instant.now()));
        JsonNode page = first.get("entries").get(0);
        assertEquals("disc", page.get("queue").asText());
        assertEquals(List.of("a", "b"), names(page));
        JsonNode b = page.get("partitions").get(1);
        assertEquals(set("name", "lastOffset", "logStart", "lastWriteAt"), keys(b));
        assertEquals(1, b.get("lastOffset").asInt());
        assertEquals(0, b.get("logStart").asInt());
        assertTrue(b.get("lastWriteAt").asText().matches(TS));
        String next = page.get("next").asText();
        JsonNode second = changed(A, "{\"queue\":\"disc\",\"limit\":2,\"after\":\"" + next + "\"}").get("entries").get(0);
        assertEquals(List.of("c"), names(second));
        assertTrue(second.get("next").isNull(), "a short page ends the sweep");

        // Since mode, one partition a page, following the cursor to the end.
        Set<String> seen = new HashSet<>();
        String after = null;
        for (int i = 0; i < 5; i++) {
            JsonNode e = changed(A, "{\"queue\":\"disc\",\"since\":\"1970-01-01T00:00:00Z\",\"limit\":1"
                    + (after == null ? "" : ",\"after\":\"" + after + "\"") + "}").get("entries").get(0);
            seen.addAll(names(e));
            if (e.get("next").isNull()) {
                break;
            }
            after = e.get("next").asText();
            assertTrue(after.startsWith("t|"), after);
        }
        assertEquals(Set.of("a", "b", "c"), seen);
        assertEquals(List.of(), names(changed(A, "{\"queue\":\"disc\",\"since\":\"2999-01-01T00:00:00Z\"}")
                .get("entries").get(0)));

        JsonNode bad = changed(A, "{\"queue\":\"disc\",\"after\":\"t|1|a\"},{\"queue\":\"disc\",\"since\":\"2020-01-01\","
                + "\"after\":\"n|a\"},{\"queue\":\"nowhere\"}");
        assertEquals("BAD_CURSOR", bad.get("entries").get(0).get("error").asText());
        assertEquals("BAD_CURSOR", bad.get("entries").get(1).get("error").asText());
        assertEquals(MAPPER.createObjectNode().put("queue", "nowhere").put("error", "UNKNOWN_TOPIC_OR_PARTITION"),
                bad.get("entries").get(2));
        assertEquals(MAPPER.createObjectNode().put("queue", "disc").put("error", "UNKNOWN_TOPIC_OR_PARTITION"),
                changed(B, "{\"queue\":\"disc\"}").get("entries").get(0), "another tenant's queue reads as nonexistent");
        assertEquals(0, changed(A, "").get("entries").size(), "an empty batch still answers safeTime");
    }

    @Test
    void partitionDiscoveryRefusesBadBatches() {
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 65; i++) {
            many.append(i == 0 ? "" : ",").append("{\"queue\":\"q").append(i).append("\"}");
        }
        for (String body : List.of("{\"entries\":[" + many + "]}", "{\"entries\":[{\"queue\":\"\"}]}",
                "{\"entries\":[{\"queue\":\"disc\",\"since\":\"not a time\"}]}",
                "{\"entries\":[{\"queue\":\"disc\",\"limit\":\"ten\"}]}", "{\"entries\":[{\"since\":null}]}",
                "{\"entries\":{}}", "[]", "{nope")) {
            Reply r = call(A, "POST", "/api/v1/partitions/changed", body);
            assertEquals(400, r.status(), body + " -> " + r.body());
            assertTrue(r.json().get("error").asText().startsWith("bad body: "), r.body());
        }
        assertEquals(1, changed(A, "{\"queue\":\"nowhere\",\"limit\":100000}").get("entries").size(),
                "an over-large limit is clamped, not refused");
    }

    // ---------------------------------------------------------------- helpers

    static List<String> names(JsonNode entry) {
        List<String> out = new ArrayList<>();
        for (JsonNode p : entry.get("partitions")) {
            out.add(p.get("name").asText());
        }
        return out;
    }

    static JsonNode find(JsonNode array, String field, String value) {
        for (JsonNode n : array) {
            if (n.get(field).asText().equals(value)) {
                return n;
            }
        }
        throw new AssertionError("no " + field + " = " + value + " in " + array);
    }

    static long count(String query) throws SQLException {
        try (Connection c = TestPostgres.connect(db); ResultSet rs = c.createStatement().executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
