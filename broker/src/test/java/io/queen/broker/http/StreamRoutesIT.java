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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three /streams/v1 routes over real HTTP on a real PostgreSQL, as the clients' streaming SDK
 * calls them: register, pop (an ordinary pop), read state, commit a cycle. The broker runs with the
 * tenant header on, so the grant and the ownership gates can be exercised; requests without the
 * header are the default tenant's.
 */
class StreamRoutesIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("streams_routes");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true"));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    // ---------------------------------------------------------------- helpers

    private static String register(String name, String source, String sink) {
        Reply r = http.post("/streams/v1/queries", "{\"name\":\"" + name + "\",\"source_queue\":\"" + source + "\""
                + (sink == null ? "" : ",\"sink_queue\":\"" + sink + "\"") + ",\"config_hash\":\"h1\"}");
        assertEquals(200, r.status(), r.body());
        return r.json().get("query_id").asText();
    }

    /** A pop as the SDK's runner makes it: its group, a batch, no wait. */
    private static JsonNode pop(String queue, String group, int batch) {
        Reply r = http.get("/api/v1/pop/queue/" + queue + "?batch=" + batch + "&consumerGroup=" + group + "&subscriptionMode=all&wait=false");
        assertEquals(200, r.status(), r.body());
        return r.json().get("messages");
    }

    private static String ackOf(JsonNode messages) {
        JsonNode last = messages.get(messages.size() - 1);
        return "{\"transactionId\":\"" + last.get("transactionId").asText() + "\",\"leaseId\":\""
                + last.get("leaseId").asText() + "\",\"status\":\"completed\",\"count\":" + messages.size() + "}";
    }

    private static Reply cycle(String query, String partition, String group, String stateOps, String pushItems,
                               String ack) {
        return http.post("/streams/v1/cycle", "{\"query_id\":\"" + query + "\",\"partition_id\":\"" + partition
                + "\",\"consumer_group\":\"" + group + "\",\"state_ops\":" + stateOps + ",\"push_items\":" + pushItems
                + ",\"ack\":" + ack + ",\"release_lease\":true}");
    }

    private static Reply stateGet(String tenant, String query, String partition, String extra) {
        return http.call(tenant, "POST", "/streams/v1/state/get", "{\"query_id\":\"" + query + "\",\"partition_id\":\""
                + partition + "\"" + extra + "}");
    }

    private static List<String> keys(Reply r) {
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get("success").asBoolean());
        List<String> out = new ArrayList<>();
        r.json().get("rows").forEach(row -> out.add(row.get("key").asText()));
        return out;
    }

    private static long count(String sql, Object... params) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void assertCycleRefusal(Reply r, int status, String error, String code) {
        assertEquals(status, r.status(), r.body());
        JsonNode b = r.json();
        assertFalse(b.get("success").asBoolean(), r.body());
        assertEquals(error, b.get("error").asText(), r.body());
        assertEquals(code, b.get("code").asText(), r.body());
        for (String field : List.of("query_id", "partition_id", "queueName", "state_ops_applied", "push_results",
                "ack_result")) {
            assertTrue(b.has(field), field + " missing: " + r.body());
        }
        assertEquals(0, b.get("state_ops_applied").asInt());
        assertEquals(0, b.get("push_results").size());
        assertTrue(b.get("ack_result").isNull());
        assertFalse(HostileInputIT.INTERNAL_TEXT.matcher(r.body()).find(), r.body());
    }

    // ---------------------------------------------------------------- POST /streams/v1/queries

    @Test
    void registrationIsIdempotentAndAChangedHashIs409UntilReset() {
        String body = "{\"name\":\"routes.reg\",\"source_queue\":\"reg_src\",\"sink_queue\":\"reg_sink\","
                + "\"config_hash\":\"%s\"%s}";
        Reply fresh = http.post("/streams/v1/queries", body.formatted("h1", ""));
        assertEquals(200, fresh.status(), fresh.body());
        JsonNode f = fresh.json();
        assertTrue(f.get("success").asBoolean());
        assertEquals("routes.reg", f.get("name").asText());
        assertEquals("h1", f.get("config_hash").asText());
        assertTrue(f.get("fresh").asBoolean());
        assertFalse(f.get("reset").asBoolean());
        String id = f.get("query_id").asText();
        UUID.fromString(id);

        Reply again = http.post("/streams/v1/queries", body.formatted("h1", ",\"reset\":false"));
        assertEquals(200, again.status());
        assertFalse(again.json().get("fresh").asBoolean());
        assertEquals(id, again.json().get("query_id").asText());

        Reply mismatch = http.post("/streams/v1/queries", body.formatted("h2", ""));
        assertEquals(409, mismatch.status(), mismatch.body());
        assertFalse(mismatch.json().get("success").asBoolean());
        assertTrue(mismatch.json().get("error").asText().contains("config_hash mismatch"), mismatch.body());
        assertEquals(id, mismatch.json().get("query_id").asText());

        Reply reset = http.post("/streams/v1/queries", body.formatted("h2", ",\"reset\":true"));
        assertEquals(200, reset.status(), reset.body());
        assertTrue(reset.json().get("reset").asBoolean());
        assertEquals(id, reset.json().get("query_id").asText());
    }

    @Test
    void registrationNeedsItsFieldsInTheReferencesOrder() {
        assertEquals("name is required", http.post("/streams/v1/queries", "{\"source_queue\":\"s\",\"config_hash\":\"h\"}")
                .json().get("error").asText());
        Reply noSource = http.post("/streams/v1/queries", "{\"name\":\"n\",\"source_queue\":\"\",\"config_hash\":\"h\"}");
        assertEquals(400, noSource.status());
        assertEquals("source_queue is required", noSource.json().get("error").asText());
        Reply noHash = http.post("/streams/v1/queries", "{\"name\":\"n\",\"source_queue\":\"s\"}");
        assertEquals(400, noHash.status());
        assertEquals("config_hash is required", noHash.json().get("error").asText());
        assertFalse(noHash.json().get("success").asBoolean());
        assertEquals(400, http.post("/streams/v1/queries", "[1]").status());
        assertEquals(400, http.post("/streams/v1/queries", "{not json").status());
        assertEquals(400, http.post("/streams/v1/queries",
                "{\"name\":\"n\",\"source_queue\":\"" + "q".repeat(256) + "\",\"config_hash\":\"h\"}").status());
    }

    @Test
    void aTenantWithoutAGrantIsDeniedNewNamesOnly() throws Exception {
        String tenant = UUID.randomUUID().toString();
        String body = "{\"name\":\"granted.q\",\"source_queue\":\"g_src\",\"config_hash\":\"h\"}";
        Reply denied = http.call(tenant, "POST", "/streams/v1/queries", body);
        assertEquals(403, denied.status(), denied.body());
        assertFalse(denied.json().get("success").asBoolean());
        assertTrue(denied.json().get("denied").asBoolean());
        assertEquals("streams not granted for this tenant", denied.json().get("error").asText());
        assertEquals(0, count("SELECT count(*) FROM queen_streams.queries WHERE tenant_id = ?::uuid", tenant));

        BrokerFixture.sql(db, "INSERT INTO queen_streams.quota (tenant_id, max_queries) VALUES ('" + tenant + "', 1)");
        Reply ok = http.call(tenant, "POST", "/streams/v1/queries", body);
        assertEquals(200, ok.status(), ok.body());
        assertTrue(ok.json().get("fresh").asBoolean());
        Reply full = http.call(tenant, "POST", "/streams/v1/queries", body.replace("granted.q", "granted.q2"));
        assertEquals(403, full.status());
        assertTrue(full.json().get("error").asText().contains("quota exceeded"), full.body());

        BrokerFixture.sql(db, "UPDATE queen_streams.quota SET enabled = false WHERE tenant_id = '" + tenant + "'");
        assertEquals(200, http.call(tenant, "POST", "/streams/v1/queries", body).status(),
                "a revoked grant stops new queries, never a running one");
        assertEquals(200, http.post("/streams/v1/queries", body).status(), "the default tenant needs no grant");
    }

    // ---------------------------------------------------------------- a cycle end to end

    @Test
    void aCycleCommitsStateSinkAndAckAndItsStateReadsBack() {
        String q = register("routes.e2e", "e2e_src", "e2e_sink");
        http.push("e2e_src", "p", "{\"v\":1}", "{\"v\":2}", "{\"v\":3}");
        JsonNode batch = pop("e2e_src", "streams.e2e", 10);
        assertEquals(3, batch.size());
        String pid = batch.get(0).get("partitionId").asText();

        Reply r = cycle(q, pid, "streams.e2e",
                "[{\"type\":\"upsert\",\"key\":\"tumb\\u001fw1\",\"value\":{\"sum\":6,\"windowEnd\":1000}},"
                        + "{\"type\":\"upsert\",\"key\":\"__wm__\",\"value\":{\"eventTimeMs\":5}}]",
                "[{\"queue\":\"e2e_sink\",\"partition\":\"p\",\"payload\":{\"sum\":6}},{\"queue\":\"\",\"payload\":1}]",
                ackOf(batch));
        assertEquals(200, r.status(), r.body());
        JsonNode b = r.json();
        assertTrue(b.get("success").asBoolean(), r.body());
        assertEquals(q, b.get("query_id").asText());
        assertEquals(pid, b.get("partition_id").asText());
        assertEquals("e2e_src", b.get("queueName").asText());
        assertEquals(2, b.get("state_ops_applied").asInt());
        assertEquals(1, b.get("push_results").size(), "an item without a queue is skipped, as the reference does");
        JsonNode pushed = b.get("push_results").get(0);
        assertEquals("e2e_sink", pushed.get("queue").asText());
        assertEquals("p", pushed.get("partition").asText());
        assertEquals("queued", pushed.get("status").asText());
        assertEquals(0, pushed.get("baseOffset").asLong());
        assertTrue(pushed.get("createdAt").asText().endsWith("Z"));
        JsonNode ack = b.get("ack_result");
        assertTrue(ack.get("success").asBoolean());
        assertEquals(3, ack.get("count").asInt());
        assertTrue(ack.get("lease_released").asBoolean());
        assertFalse(ack.get("dlq").asBoolean());

        assertEquals(204, http.get("/api/v1/pop/queue/e2e_src?consumerGroup=streams.e2e&wait=false").status(),
                "the source batch is acked");
        JsonNode out = pop("e2e_sink", "reader", 10);
        assertEquals(1, out.size());
        assertEquals(6, out.get(0).get("data").get("sum").asInt());

        assertEquals(List.of("__wm__", "tumb\u001fw1"), keys(stateGet(null, q, pid, ",\"keys\":[]")));
        Reply ripe = stateGet(null, q, pid, ",\"key_prefix\":\"tumb\\u001f\",\"ripe_at_or_before\":1000");
        assertEquals(List.of("tumb\u001fw1"), keys(ripe));
        JsonNode row = ripe.json().get("rows").get(0);
        assertEquals(6, row.get("value").get("sum").asInt());
        assertTrue(row.get("updated_at").isTextual());
        assertEquals(List.of(), keys(stateGet(null, q, pid, ",\"ripe_at_or_before\":999")));
        assertEquals(List.of("__wm__"), keys(stateGet(null, q, pid, ",\"keys\":[\"__wm__\",\"nope\"]")));

        Reply flush = cycle(q, pid, "streams.e2e", "[{\"type\":\"delete\",\"key\":\"tumb\\u001fw1\"}]", "[]", "null");
        assertEquals(200, flush.status(), flush.body());
        assertTrue(flush.json().get("ack_result").isNull(), "an idle flush carries no ack");
        assertEquals(List.of("__wm__"), keys(stateGet(null, q, pid, "")));
    }

    @Test
    void aStaleLeaseIs409AndLeavesStateAndSinkUntouched() {
        String q = register("routes.stale", "stale_src", "stale_sink");
        http.push("stale_src", "p", "1", "2");
        JsonNode batch = pop("stale_src", "streams.stale", 10);
        String pid = batch.get(0).get("partitionId").asText();
        assertEquals(200, cycle(q, pid, "streams.stale", "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":1}]", "[]",
                "null").status());

        String wrongLease = ackOf(batch).replace(batch.get(0).get("leaseId").asText(), UUID.randomUUID().toString());
        Reply r = cycle(q, pid, "streams.stale", "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":2}]",
                "[{\"queue\":\"stale_sink\",\"payload\":{\"x\":1}}]", wrongLease);
        assertCycleRefusal(r, 409, "invalid or expired lease", "lease_invalid");
        assertEquals(q, r.json().get("query_id").asText());
        assertEquals("stale_src", r.json().get("queueName").asText());

        assertEquals(404, http.get("/api/v1/resources/queues/stale_sink").status(), "the sink was never created");
        Reply state = stateGet(null, q, pid, "");
        assertEquals(1, state.json().get("rows").get(0).get("value").asInt(), "the state is as before");
        Reply good = cycle(q, pid, "streams.stale", "[]", "[]", ackOf(batch));
        assertEquals(200, good.status(), "the lease was kept, so the real holder can still ack: " + good.body());
    }

    @Test
    void malformedCyclesAre4xxWithTheReferencesFieldsAndWriteNothing() throws Exception {
        String q = register("routes.bad", "bad_src", null);
        http.push("bad_src", "p", "1");
        String pid = pop("bad_src", "streams.bad", 1).get(0).get("partitionId").asText();

        assertCycleRefusal(cycle(q, pid, "g", "[{\"type\":\"merge\",\"key\":\"k\"}]", "[]", "null"), 400,
                "Unknown state_op type: merge", "bad_request");
        assertCycleRefusal(cycle(q, pid, "g", "[{\"type\":\"upsert\",\"value\":1}]", "[]", "null"), 400,
                "state_ops[0].key is required (a string)", "bad_request");
        assertCycleRefusal(cycle(q, pid, "g", "{}", "[]", "null"), 400, "state_ops must be an array", "bad_request");
        assertCycleRefusal(cycle(q, pid, "g", "[]", "7", "null"), 400, "push_items must be an array", "bad_request");
        assertCycleRefusal(cycle(q, pid, "g", "[]", "[]", "\"x\""), 400, "ack must be an object or null", "bad_request");
        assertCycleRefusal(cycle(q, pid, "g", "[{\"type\":\"upsert\",\"key\":\"" + "k".repeat(2049) + "\"}]", "[]",
                "null"), 413, "state_ops[0].key is longer than 2048 bytes", "payload_too_large");
        String big = "\"" + "v".repeat(16 * 1024 * 1024) + "\"";
        assertCycleRefusal(cycle(q, pid, "g", "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":" + big + "}]", "[]",
                "null"), 413, "state_ops[0].value is larger than 16777216 bytes of JSON", "payload_too_large");
        assertCycleRefusal(cycle(q, pid, "g", "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":\"a\\u0000b\"}]", "[]",
                "null"), 400, "bad body: invalid value at state_ops[0].value: contains a NUL character (\\u0000) at position 1",
                "bad_request");
        assertCycleRefusal(cycle(UUID.randomUUID().toString(), pid, "g", "[]", "[]", "null"), 404, "query not found",
                "query_not_found");
        assertCycleRefusal(cycle(q, UUID.randomUUID().toString(), "g", "[]", "[]", "null"), 404,
                "partition not found", "partition_not_found");
        assertCycleRefusal(cycle("not-a-uuid", pid, "g", "[]", "[]", "null"), 400,
                "query_id \"not-a-uuid\" is not a UUID", "bad_request");
        assertCycleRefusal(http.post("/streams/v1/cycle", "{\"partition_id\":\"" + pid + "\"}"), 400,
                "query_id is required", "bad_request");
        assertCycleRefusal(http.post("/streams/v1/cycle", "{\"query_id\":\"" + q + "\"}"), 400,
                "partition_id is required", "bad_request");
        assertCycleRefusal(http.post("/streams/v1/cycle", "{oops"), 400,
                http.post("/streams/v1/cycle", "{oops").json().get("error").asText(), "bad_request");
        assertEquals(0, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", q));

        // A partition of another tenant reads as not found on both routes.
        String other = UUID.randomUUID().toString();
        BrokerFixture.sql(db, "INSERT INTO queen_streams.quota (tenant_id) VALUES ('" + other + "')");
        Reply theirs = http.call(other, "POST", "/streams/v1/queries",
                "{\"name\":\"routes.bad\",\"source_queue\":\"bad_src\",\"config_hash\":\"h1\"}");
        String theirQuery = theirs.json().get("query_id").asText();
        assertCycleRefusal(http.call(other, "POST", "/streams/v1/cycle", "{\"query_id\":\"" + theirQuery
                + "\",\"partition_id\":\"" + pid + "\",\"state_ops\":[{\"type\":\"upsert\",\"key\":\"x\"}]}"), 404,
                "partition not found", "partition_not_found");
        Reply foreignRead = stateGet(other, theirQuery, pid, "");
        assertEquals(404, foreignRead.status(), foreignRead.body());
        assertEquals("not found", foreignRead.json().get("error").asText());
        assertFalse(foreignRead.json().get("success").asBoolean());
        assertEquals(0, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", theirQuery));
    }

    @Test
    void stateReadsRefuseWhatTheyCannotAnswer() {
        String q = register("routes.read", "read_src", null);
        http.push("read_src", "p", "1");
        String pid = pop("read_src", "g", 1).get(0).get("partitionId").asText();
        Reply missing = http.post("/streams/v1/state/get", "{\"query_id\":\"" + q + "\"}");
        assertEquals(400, missing.status());
        assertEquals("query_id and partition_id are required", missing.json().get("error").asText());
        assertEquals(0, missing.json().get("rows").size());
        assertEquals(400, http.post("/streams/v1/state/get", "[]").status());
        assertEquals("request body must be a JSON object", http.post("/streams/v1/state/get", "[]").json()
                .get("error").asText());
        assertEquals(400, stateGet(null, q, "nope", "").status());
        assertEquals(400, stateGet(null, q, pid, ",\"keys\":[{\"a\":1}]").status());
        Reply unknownQuery = stateGet(null, UUID.randomUUID().toString(), pid, "");
        assertEquals(404, unknownQuery.status());
        assertEquals("query not found", unknownQuery.json().get("error").asText());
        assertEquals(List.of(), keys(stateGet(null, q, pid, ",\"keys\":null,\"key_prefix\":\"\"")),
                "keys null and an empty prefix mean every key (none yet)");
    }

    // ---------------------------------------------------------------- wake-ups, concurrency, cleanup

    @Test
    void aCommittedCycleWakesAParkedConsumerOfTheSink() throws Exception {
        String q = register("routes.wake", "wake_src", "wake_sink");
        http.push("wake_src", "p", "1");
        JsonNode batch = pop("wake_src", "streams.wake", 1);
        String pid = batch.get(0).get("partitionId").asText();
        CompletableFuture<Reply> parked = CompletableFuture.supplyAsync(
                () -> http.get("/api/v1/pop/queue/wake_sink?wait=true&timeout=20000&consumerGroup=out"));
        await("an empty sink: the pop stays parked").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .until(() -> !parked.isDone());
        long start = System.nanoTime();
        Reply r = cycle(q, pid, "streams.wake", "[]", "[{\"queue\":\"wake_sink\",\"partition\":\"p\",\"payload\":\"hi\"}]",
                ackOf(batch));
        assertEquals(200, r.status(), r.body());
        Reply woken = parked.get(20, TimeUnit.SECONDS);
        assertEquals(200, woken.status(), woken.body());
        assertEquals("hi", woken.json().get("messages").get(0).get("data").asText());
        assertTrue((System.nanoTime() - start) / 1_000_000 < 5_000, "woken by the cycle's commit, not the timeout");
    }

    @Test
    void concurrentCyclesOnDifferentPartitionsOfOneQueryAllCommit() throws Exception {
        String q = register("routes.concurrent", "conc_src", "conc_sink");
        int partitions = 4;
        int rounds = 5;
        for (int i = 0; i < partitions; i++) {
            for (int r = 0; r < rounds; r++) {
                http.push("conc_src", "p" + i, "{\"r\":" + r + "}");
            }
        }
        List<Future<Integer>> workers = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(partitions)) {
            for (int i = 0; i < partitions; i++) {
                String partition = "p" + i;
                workers.add(pool.submit(() -> {
                    int done = 0;
                    for (int r = 0; r < rounds; r++) {
                        Reply got = http.get("/api/v1/pop/queue/conc_src/partition/" + partition
                                + "?batch=1&consumerGroup=streams.conc&subscriptionMode=all&wait=false");
                        assertEquals(200, got.status(), got.body());
                        JsonNode batch = got.json().get("messages");
                        String pid = batch.get(0).get("partitionId").asText();
                        Reply c = cycle(q, pid, "streams.conc",
                                "[{\"type\":\"upsert\",\"key\":\"n\",\"value\":" + (r + 1) + "}]",
                                "[{\"queue\":\"conc_sink\",\"partition\":\"a\",\"payload\":1},"
                                        + "{\"queue\":\"conc_sink\",\"partition\":\"b\",\"payload\":2}]",
                                ackOf(batch));
                        assertEquals(200, c.status(), c.body());
                        assertTrue(c.json().get("success").asBoolean(), c.body());
                        done++;
                    }
                    return done;
                }));
            }
            for (Future<Integer> w : workers) {
                assertEquals(rounds, w.get(60, TimeUnit.SECONDS));
            }
        }
        assertEquals(partitions, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", q));
        assertEquals(partitions, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid"
                + " AND value = to_jsonb(?::int)", q, rounds));
        assertEquals(2L * partitions * rounds, count("SELECT coalesce(sum(end_offset - base_offset + 1), 0)"
                + " FROM queen.log_segments s JOIN queen.log_partitions lp ON lp.id = s.partition_id"
                + " JOIN queen.queues qq ON qq.id = lp.queue_id WHERE qq.name = 'conc_sink'"));
    }

    @Test
    void aQueueDeleteAndATenantPurgeCleanTheStreamsRows() throws Exception {
        String q = register("routes.cleanup", "clean_src", null);
        http.push("clean_src", "p", "1");
        String pid = pop("clean_src", "g", 1).get(0).get("partitionId").asText();
        assertEquals(200, cycle(q, pid, "g", "[{\"type\":\"upsert\",\"key\":\"k\"}]", "[]", "null").status());
        assertEquals(1, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", q));
        assertEquals(200, http.delete("/api/v1/resources/queues/clean_src").status());
        assertEquals(0, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", q),
                "the deleted queue's partitions take their state along");

        String tenant = UUID.randomUUID().toString();
        BrokerFixture.sql(db, "INSERT INTO queen_streams.quota (tenant_id) VALUES ('" + tenant + "')");
        String theirs = http.call(tenant, "POST", "/streams/v1/queries",
                "{\"name\":\"routes.cleanup\",\"source_queue\":\"t_src\",\"config_hash\":\"h\"}").json()
                .get("query_id").asText();
        http.call(tenant, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"t_src\",\"partition\":\"p\",\"payload\":1}]}");
        JsonNode m = MAPPER.readTree(http.call(tenant, "GET", "/api/v1/pop/queue/t_src?wait=false", (String) null).body())
                .get("messages").get(0);
        Reply c = http.call(tenant, "POST", "/streams/v1/cycle", "{\"query_id\":\"" + theirs + "\",\"partition_id\":\""
                + m.get("partitionId").asText() + "\",\"state_ops\":[{\"type\":\"upsert\",\"key\":\"k\",\"value\":1}],"
                + "\"ack\":{\"transactionId\":\"" + m.get("transactionId").asText() + "\",\"leaseId\":\""
                + m.get("leaseId").asText() + "\",\"status\":\"completed\",\"count\":1}}");
        assertEquals(200, c.status(), c.body());
        assertEquals(1, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", theirs));

        boolean done = false;
        for (int i = 0; i < 20 && !done; i++) {
            Reply purge = http.post("/api/v1/system/tenants/" + tenant + "/purge", "{}");
            assertEquals(200, purge.status(), purge.body());
            done = purge.json().get("done").asBoolean();
        }
        assertTrue(done);
        for (String table : List.of("queen_streams.queries", "queen_streams.quota")) {
            assertEquals(0, count("SELECT count(*) FROM " + table + " WHERE tenant_id = ?::uuid", tenant), table);
        }
        assertEquals(0, count("SELECT count(*) FROM queen_streams.state WHERE query_id = ?::uuid", theirs));
        assertEquals(200, http.post("/streams/v1/queries",
                "{\"name\":\"routes.cleanup\",\"source_queue\":\"clean_src\",\"config_hash\":\"h1\"}").status(),
                "the default tenant's query of the same name is untouched");
        assertEquals(q, http.post("/streams/v1/queries",
                "{\"name\":\"routes.cleanup\",\"source_queue\":\"clean_src\",\"config_hash\":\"h1\"}").json()
                .get("query_id").asText());
    }

    @Test
    void aLostDatabaseIs503OnEveryStreamsRoute() throws Exception {
        String q = register("routes.outage", "outage_src", null);
        http.push("outage_src", "p", "1");
        String pid = pop("outage_src", "g", 1).get(0).get("partitionId").asText();
        List<String[]> calls = List.of(
                new String[] {"/streams/v1/queries", "{\"name\":\"o\",\"source_queue\":\"s\",\"config_hash\":\"h\"}"},
                new String[] {"/streams/v1/state/get", "{\"query_id\":\"" + q + "\",\"partition_id\":\"" + pid + "\"}"},
                new String[] {"/streams/v1/cycle", "{\"query_id\":\"" + q + "\",\"partition_id\":\"" + pid + "\"}"});
        DatabaseOutageIT.allowConnections(db, false);
        List<Reply> answers = new ArrayList<>();
        try {
            List<CompletableFuture<Reply>> all = new ArrayList<>();
            for (String[] call : calls) {
                all.add(CompletableFuture.supplyAsync(() -> http.post(call[0], call[1])));
            }
            for (CompletableFuture<Reply> f : all) {
                answers.add(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            DatabaseOutageIT.allowConnections(db, true);
        }
        for (int i = 0; i < calls.size(); i++) {
            Reply a = answers.get(i);
            assertEquals(503, a.status(), calls.get(i)[0] + ": " + a.body());
            assertEquals("database_unavailable", a.json().get("code").asText(), a.body());
            assertTrue(a.json().get("errorId").isTextual(), a.body());
            assertFalse(HostileInputIT.INTERNAL_TEXT.matcher(a.body()).find(), a.body());
        }
        await().atMost(30, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                .until(() -> http.post(calls.get(1)[0], calls.get(1)[1]).status() == 200);
    }
}
