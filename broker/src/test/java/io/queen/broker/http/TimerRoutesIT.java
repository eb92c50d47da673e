package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The timer routes over real HTTP on a real PostgreSQL (broker/DESIGN.md, Timers): every operation,
 * status and error, the switches, encryption at schedule, zstd payloads, dedup by txn, the DLQ after
 * five permanent failures, a due timer reaching a parked long-poll at once, and the cleanup by queue
 * delete and tenant purge. Each test uses queues of its own.
 */
class TimerRoutesIT {
    static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    private static DatabaseSettings db;
    private static Broker broker;
    private static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("timer_routes");
        broker = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", KEY, "QUEEN_TIMERS_MAX_PAYLOAD_BYTES", "4096",
                "QUEEN_SWITCHES_REFRESH_MS", "100", "QUEEN_SWEEPER_BACKOFF_MIN_MS", "10",
                "QUEEN_SWEEPER_BACKOFF_MAX_MS", "50"));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static String schedule(String queue, String key, long delayMs, String txn, String json) {
        return "{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\",\"delayMs\":" + delayMs
                + ",\"txn\":\"" + txn + "\",\"payload\":\"" + b64(json) + "\"}";
    }

    static JsonNode batch(HttpProbe on, String... ops) {
        Reply r = on.post("/api/v1/timers", "{\"operations\":[" + String.join(",", ops) + "]}");
        assertEquals(200, r.status(), r.body());
        return r.json().get("results");
    }

    static void refused(Reply r, int status, String error, String reason) {
        assertEquals(status, r.status(), r.body());
        assertEquals(error, r.json().get("error").asText(), r.body());
        if (reason != null) {
            assertEquals(reason, r.json().get("reason").asText(), r.body());
        }
    }

    /** Pops one message of {@code queue} with a long-poll, acking it (autoAck). */
    static JsonNode popOne(HttpProbe on, String queue, int timeoutMs) {
        Reply r = on.get("/api/v1/pop/queue/" + queue + "?batch=100&wait=true&autoAck=true&timeout=" + timeoutMs);
        if (r.status() == 204) {
            return null;
        }
        assertEquals(200, r.status(), r.body());
        return r.json().get("messages");
    }

    static long count(String sql) throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void everyOperationAndStatus() {
        JsonNode r = batch(http, schedule("t_ops", "a/b c", 600_000, "tx-1", "{\"n\":1}"));
        JsonNode e = r.get(0);
        assertTrue(e.get("ok").asBoolean());
        assertEquals("scheduled", e.get("status").asText());
        assertEquals("t_ops", e.get("queue").asText());
        assertEquals("a/b c", e.get("timerKey").asText());
        assertEquals("tx-1", e.get("txn").asText());
        assertTrue(e.get("deliverAt").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));
        String id = e.get("messageId").asText();
        assertEquals(7, java.util.UUID.fromString(id).version(), "a broker-minted UUIDv7");

        JsonNode again = batch(http, schedule("t_ops", "a/b c", 700_000, "tx-2", "{\"n\":2}")).get(0);
        assertEquals("rescheduled", again.get("status").asText());
        assertNotEquals(id, again.get("messageId").asText());

        JsonNode got = http.get("/api/v1/timers/t_ops/a%2Fb%20c").json();
        assertTrue(got.get("found").asBoolean(), got.toString());
        for (String f : new String[] {"queue", "timerKey", "partition", "deliverAt", "txn", "messageId", "payload",
                "payloadZstd", "encrypted", "producerSub", "attempts", "lastError", "claimed", "createdAt", "updatedAt"}) {
            assertTrue(got.has(f), f + " in " + got);
        }
        assertEquals("Default", got.get("partition").asText());
        assertEquals("{\"n\":2}", new String(Base64.getDecoder().decode(got.get("payload").asText())));
        assertEquals("tx-2", got.get("txn").asText());
        assertFalse(got.get("claimed").asBoolean());
        assertEquals(0, got.get("attempts").asInt());
        JsonNode sameKey = http.get("/api/v1/timers/t_ops/a/b%20c").json();
        assertTrue(sameKey.get("found").asBoolean(), "a/b and a%2Fb name one key");

        batch(http, schedule("t_ops", "k2", 600_000, "x", "{}"), schedule("t_ops", "k3", 600_000, "y", "{}"));
        JsonNode page = http.get("/api/v1/timers/t_ops?limit=2").json();
        assertEquals(2, page.get("rows").size());
        assertTrue(page.get("truncated").asBoolean());
        assertFalse(page.get("rows").get(0).has("payload"));
        JsonNode rest = http.get("/api/v1/timers/t_ops?after=" + page.get("nextAfter").asText()).json();
        assertEquals(1, rest.get("rows").size());
        assertFalse(rest.get("truncated").asBoolean());
        assertTrue(rest.get("nextAfter").isNull());
        assertEquals(2, http.get("/api/v1/timers/t_ops?mode=count&prefix=k").json().get("count").asInt());
        refused(http.get("/api/v1/timers/t_ops?mode=count"), 400, "timers_bad_request", "timers_count_prefix_required");

        Reply cancelled = http.delete("/api/v1/timers/t_ops/a%2Fb%20c?txn=tx-2");
        assertEquals(200, cancelled.status(), cancelled.body());
        assertEquals("cancelled", cancelled.json().get("status").asText());
        assertTrue(cancelled.json().get("ok").asBoolean());
        JsonNode absent = http.delete("/api/v1/timers/t_ops/a%2Fb%20c?txn=tx-2").json();
        assertEquals("absent", absent.get("status").asText());
        assertFalse(absent.get("ok").asBoolean());
        assertEquals("tx-2", absent.get("txn").asText());
        JsonNode miss = http.get("/api/v1/timers/t_ops/a%2Fb%20c").json();
        assertFalse(miss.get("found").asBoolean());
        JsonNode viaPost = batch(http, "{\"op\":\"cancel\",\"queue\":\"t_ops\",\"timerKey\":\"k2\"}").get(0);
        assertEquals("cancelled", viaPost.get("status").asText());
    }

    @Test
    void refusals() throws Exception {
        for (String field : new String[] {"producerSub", "messageId", "tenant", "_x"}) {
            String op = schedule("t_bad", "k", 10, "t", "{}").replace("{\"op\"", "{\"" + field + "\":\"v\",\"op\"");
            refused(http.post("/api/v1/timers", "{\"operations\":[" + op + "]}"), 400, "timers_bad_request",
                    "timers_server_owned_field");
        }
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 257; i++) {
            many.append(i == 0 ? "" : ",").append(schedule("t_bad", "k" + i, 10, "t", "{}"));
        }
        refused(http.post("/api/v1/timers", "{\"operations\":[" + many + "]}"), 400, "timers_bad_request",
                "timers_too_many_ops");
        refused(http.post("/api/v1/timers", "{\"operations\":[" + schedule("t_bad", "k", 7_776_000_001L, "t", "{}") + "]}"),
                403, "timer_horizon_exceeded", null);
        refused(http.post("/api/v1/timers", "{\"operations\":[" + schedule("t_bad", "k", 1, "t",
                "{\"s\":\"" + "x".repeat(5000) + "\"}") + "]}"), 413, "payload_too_large", "timers_payload_too_large");
        refused(http.post("/api/v1/timers", "{nope"), 400, "timers_bad_request", "timers_bad_body");
        refused(http.post("/api/v1/timers", "{\"operations\":[{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\","
                + "\"txn\":\"t\",\"payload\":\"e30=\"}]}"), 400, "timers_bad_request", "timers_delay_required");
        refused(http.post("/api/v1/timers", "{\"operations\":[" + schedule("t_bad", "k", 1, "t", "not json") + "]}"),
                400, "timers_bad_request", "timers_payload_not_json");
        refused(http.post("/api/v1/timers", "{\"operations\":[{\"op\":\"explode\",\"queue\":\"q\",\"timerKey\":\"k\"}]}"),
                400, "timers_bad_request", "timers_bad_op");
        assertEquals(0, count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_bad'"), "nothing of a refused call");
    }

    @Test
    void dueTimerReachesAParkedConsumerPromptly() throws Exception {
        http.push("t_wake", "Default", "{\"warm\":true}");
        assertEquals(1, popOne(http, "t_wake", 1000).size());
        CompletableFuture<JsonNode> parked = CompletableFuture.supplyAsync(() -> popOne(http, "t_wake", 15_000));
        // No parked count is visible over HTTP: a pop still pending after 300 ms has parked.
        Awaitility.await("the pop parks first").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                .until(() -> !parked.isDone());
        long scheduledAt = System.nanoTime();
        JsonNode promised = batch(http, schedule("t_wake", "soon", 200, "wake-txn", "{\"hello\":\"timer\"}")).get(0);
        JsonNode messages = parked.get();
        long ms = (System.nanoTime() - scheduledAt) / 1_000_000;
        assertEquals(1, messages.size(), "the fired timer");
        JsonNode m = messages.get(0);
        assertEquals("timer", m.get("data").get("hello").asText());
        assertEquals("wake-txn", m.get("transactionId").asText());
        assertEquals(promised.get("messageId").asText(), m.get("id").asText(), "the id promised at schedule");
        assertTrue(ms < 1500, "delivered " + ms + " ms after scheduling a 200 ms timer");
        assertFalse(http.get("/api/v1/timers/t_wake/soon").json().get("found").asBoolean(), "fired rows are gone");
    }

    @Test
    void encryptedQueueSealsAtScheduleAndZstdIsUndoneAtFire() throws Exception {
        assertEquals(200, http.post("/api/v1/configure", "{\"queue\":\"t_enc\",\"options\":{\"encryptionEnabled\":true}}").status());
        batch(http, schedule("t_enc", "secret", 60_000, "e1", "{\"pin\":1234}"));
        JsonNode got = http.get("/api/v1/timers/t_enc/secret").json();
        assertTrue(got.get("encrypted").asBoolean());
        String stored = new String(Base64.getDecoder().decode(got.get("payload").asText()));
        assertFalse(stored.contains("1234"), "no clear text at rest: " + stored);
        assertTrue(stored.contains("authTag"));
        batch(http, schedule("t_enc", "secret", 0, "e1", "{\"pin\":1234}"));
        JsonNode m = popOne(http, "t_enc", 10_000);
        assertEquals(1234, m.get(0).get("data").get("pin").asInt(), "readers decrypt");

        byte[] zstd = com.github.luben.zstd.Zstd.compress("{\"z\":\"packed\"}".getBytes(StandardCharsets.UTF_8));
        batch(http, "{\"op\":\"schedule\",\"queue\":\"t_zstd\",\"timerKey\":\"z\",\"delayMs\":0,\"txn\":\"z1\","
                + "\"payloadZstd\":true,\"payload\":\"" + Base64.getEncoder().encodeToString(zstd) + "\"}");
        JsonNode z = popOne(http, "t_zstd", 10_000);
        assertEquals("packed", z.get(0).get("data").get("z").asText());
    }

    @Test
    void aTimerWhoseTxnIsAlreadyInTheLogIsNotDeliveredTwice() throws Exception {
        assertEquals(200, http.post("/api/v1/configure", "{\"queue\":\"t_dedup\",\"options\":{\"dedupWindowSeconds\":600}}").status());
        assertEquals(201, http.post("/api/v1/push", "{\"items\":[{\"queue\":\"t_dedup\",\"transactionId\":\"once\","
                + "\"payload\":{\"from\":\"push\"}}]}").status());
        batch(http, schedule("t_dedup", "d", 0, "once", "{\"from\":\"timer\"}"));
        Awaitility.await("the timer fires").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_dedup'") == 0);
        assertEquals(0, count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_dedup'"));
        JsonNode m = popOne(http, "t_dedup", 500);
        assertEquals(1, m.size());
        assertEquals("push", m.get(0).get("data").get("from").asText());
        assertEquals(null, popOne(http, "t_dedup", 500));
    }

    @Test
    void switchesStopScheduleAndFireButNeverACancel() throws Exception {
        batch(http, schedule("t_sw", "keep", 600_000, "k", "{}"));
        assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"timersSchedule\":false,\"timersFire\":false}").status());
        try {
            Reply off = http.post("/api/v1/timers", "{\"operations\":[" + schedule("t_sw", "new", 0, "n", "{}") + "]}");
            refused(off, 503, "timers_disabled", null);
            HttpResponse<String> mixed = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + broker.port() + "/api/v1/timers"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"operations\":[" + schedule("t_sw", "new", 0, "n", "{}")
                            + ",{\"op\":\"cancel\",\"queue\":\"t_sw\",\"timerKey\":\"keep\"}]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(503, mixed.statusCode());
            assertTrue(mixed.headers().firstValue("x-queen-timers-hint").orElse("").contains("DELETE"));
            assertTrue(mixed.headers().firstValue("retry-after").isPresent());
            assertEquals("cancelled", http.delete("/api/v1/timers/t_sw/keep").json().get("status").asText());
            // The fire switch: a due timer waits.
            BrokerFixture.sql(db, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                    + " VALUES ('t_sw', 'due', now(), 'due-txn', gen_random_uuid(), convert_to('{\"d\":1}', 'UTF8'))");
            // An absence takes time to show: the due row must stay for 1.5 s, many sweeper passes.
            Awaitility.await("the due timer stays unfired while the fire is off").during(Duration.ofMillis(1500))
                    .atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                    .until(() -> count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_sw'") == 1);
        } finally {
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"timersSchedule\":true,\"timersFire\":true}").status());
        }
        JsonNode m = popOne(http, "t_sw", 10_000);
        assertEquals(1, m.get(0).get("data").get("d").asInt(), "fired once switched back on");
    }

    @Test
    void claimedTimersAreTooLateAndPermanentFailuresEndInTheDlq() throws Exception {
        // A row a broker holds: its claim runs for 30 s, so both changes are too late.
        BrokerFixture.sql(db, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload,"
                + " claimed_until, claim_token) VALUES ('t_late', 'held', now() + interval '1 hour', 'h', gen_random_uuid(),"
                + " convert_to('{}', 'UTF8'), now() + interval '30 s', gen_random_uuid())");
        assertEquals("too_late", batch(http, schedule("t_late", "held", 1000, "h2", "{}")).get(0).get("status").asText());
        JsonNode late = http.delete("/api/v1/timers/t_late/held").json();
        assertEquals("too_late", late.get("status").asText());
        assertFalse(late.get("ok").asBoolean());
        assertTrue(http.get("/api/v1/timers/t_late/held").json().get("claimed").asBoolean());

        // A payload flagged zstd that is not: every fire fails for good; the fifth sends it to the DLQ.
        BrokerFixture.sql(db, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload,"
                + " payload_zstd) VALUES ('t_poison', 'p', now(), 'poison', gen_random_uuid(), convert_to('{\"x\":1}', 'UTF8'), true)");
        Awaitility.await("the poison timer leaves for the DLQ").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_poison'") == 0);
        assertEquals(0, count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_poison'"));
        assertEquals(1, count("SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 't_poison' AND d.consumer_group = '__timer__'"
                + " AND d.retry_count = 5 AND d.transaction_id = 'poison'"));
    }

    @Test
    void queueDeleteAndTenantPurgeRemoveTimers() throws Exception {
        http.push("t_del", "Default", "{}");
        batch(http, schedule("t_del", "a", 600_000, "a", "{}"), schedule("t_del", "b", 600_000, "b", "{}"));
        assertEquals(200, http.delete("/api/v1/resources/queues/t_del").status());
        assertEquals(0, count("SELECT count(*) FROM queen.log_timers WHERE queue = 't_del'"));

        String tenant = "33333333-0000-4000-8000-000000000001";
        BrokerFixture.sql(db, "INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " VALUES ('" + tenant + "', 'q', 'k', now() + interval '1 day', 't', gen_random_uuid(), '\\x7b7d')");
        BrokerFixture.sql(db, "SELECT queen.delete_tenant_data_v1('" + tenant + "')");
        assertEquals(0, count("SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + tenant + "'"));
    }
}
