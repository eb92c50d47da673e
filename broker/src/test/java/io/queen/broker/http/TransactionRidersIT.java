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

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV and timer riders of POST /api/v1/transaction on a real PostgreSQL: each rider operation and
 * its answer, their place in the flat results, and atomicity: a lost precondition, a refused ack or
 * a refused timer leaves KV, timers and pushes as they were. Each test uses names of its own.
 */
class TransactionRidersIT {
    private static DatabaseSettings db;
    private static Broker broker;
    private static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("txn_riders");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TIMERS_MAX_HORIZON_S", "3600"));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String push(String queue, String payload) {
        return "{\"type\":\"push\",\"items\":[{\"queue\":\"" + queue + "\",\"payload\":" + payload + "}]}";
    }

    private static String schedule(String queue, String key, long delayMs) {
        return "{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\",\"delayMs\":" + delayMs
                + ",\"txn\":\"t-" + key + "\",\"payload\":\"" + b64("{\"k\":\"" + key + "\"}") + "\"}";
    }

    private static Reply txn(String operations, String kv, String timers) {
        StringBuilder body = new StringBuilder("{\"operations\":[").append(operations).append(']');
        if (kv != null) {
            body.append(",\"kv\":[").append(kv).append(']');
        }
        if (timers != null) {
            body.append(",\"timers\":[").append(timers).append(']');
        }
        return http.post("/api/v1/transaction", body.append('}').toString());
    }

    private static JsonNode kvGet(String ns, String key) {
        Reply r = http.get("/api/v1/kv/" + ns + "/" + key);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    private static JsonNode timerGet(String queue, String key) {
        Reply r = http.get("/api/v1/timers/" + queue + "/" + key);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    private static void assertEmpty(String queue) {
        assertEquals(204, http.get("/api/v1/pop/queue/" + queue).status(), queue + " must be empty");
    }

    @Test
    void everyKvOperationRidesAndIsAnsweredAfterTheOperations() {
        assertEquals(200, http.post("/api/v1/kv", "[{\"op\":\"put\",\"ns\":\"rk\",\"key\":\"old\",\"value\":{\"v\":1},"
                + "\"forever\":true},{\"op\":\"put\",\"ns\":\"rk\",\"key\":\"gone\",\"value\":1,\"ttlSeconds\":60}]").status());
        Reply r = txn(push("rk_out", "{\"n\":1}"),
                "{\"op\":\"put\",\"ns\":\"rk\",\"key\":\"a\",\"value\":{\"x\":1.10},\"ttlSeconds\":600},"
                        + "{\"op\":\"putIfAbsent\",\"ns\":\"rk\",\"key\":\"old\",\"value\":2,\"ttlSeconds\":60},"
                        + "{\"op\":\"incr\",\"ns\":\"rk\",\"key\":\"n\",\"delta\":5,\"forever\":true},"
                        + "{\"op\":\"get\",\"ns\":\"rk\",\"key\":\"old\"},"
                        + "{\"op\":\"getMany\",\"ns\":\"rk\",\"keys\":[\"old\",\"none\"]},"
                        + "{\"op\":\"delete\",\"ns\":\"rk\",\"key\":\"gone\"}", null);
        assertEquals(200, r.status(), r.body());
        JsonNode body = r.json();
        assertTrue(body.get("success").asBoolean(), r.body());
        JsonNode results = body.get("results");
        assertEquals(7, results.size(), r.body());
        assertEquals("push", results.get(0).get("type").asText());
        for (int i = 1; i < 7; i++) {
            assertEquals(i, results.get(i).get("index").asInt(), "flat index");
            assertEquals("kv", results.get(i).get("type").asText());
            assertEquals(i - 1, results.get(i).get("opIndex").asInt(), "the rider's own index");
        }
        assertEquals("put", results.get(1).get("op").asText());
        assertTrue(results.get(1).get("applied").asBoolean());
        assertTrue(r.body().contains("{\"x\":1.10}"), "exact decimals: " + r.body());
        assertFalse(results.get(2).get("applied").asBoolean(), "a putIfAbsent that loses without required is a verdict");
        assertEquals("exists", results.get(2).get("reason").asText());
        assertEquals(5, results.get(3).get("value").asInt());
        assertTrue(results.get(4).get("found").asBoolean());
        assertEquals(1, results.get(4).get("value").get("v").asInt());
        assertEquals("none", results.get(5).get("missing").get(0).asText());
        assertTrue(results.get(6).get("applied").asBoolean());
        assertEquals(1, kvGet("rk", "a").get("value").get("x").asInt());
        assertFalse(kvGet("rk", "gone").get("found").asBoolean());
        assertEquals(5, kvGet("rk", "n").get("value").asInt());
        assertEquals(200, http.get("/api/v1/pop/queue/rk_out").status(), "the push committed with them");
    }

    @Test
    void timerRidersScheduleAndCancelWithTheBundle() {
        Reply r = txn(push("rt_out", "1"), null, schedule("rt_q", "a", 600_000) + "," + schedule("rt_q", "b", 600_000));
        assertEquals(200, r.status(), r.body());
        JsonNode results = r.json().get("results");
        assertTrue(r.json().get("success").asBoolean(), r.body());
        assertEquals(3, results.size());
        assertEquals("timer", results.get(1).get("type").asText());
        assertEquals(1, results.get(1).get("index").asInt());
        assertEquals(0, results.get(1).get("opIndex").asInt());
        assertEquals("scheduled", results.get(1).get("status").asText());
        assertTrue(results.get(1).get("ok").asBoolean());
        assertTrue(results.get(1).hasNonNull("messageId") && results.get(1).hasNonNull("deliverAt"));
        assertEquals(2, results.get(2).get("index").asInt());
        assertTrue(timerGet("rt_q", "a").get("found").asBoolean());

        Reply c = txn("", null, "{\"op\":\"cancel\",\"queue\":\"rt_q\",\"timerKey\":\"a\"},"
                + "{\"op\":\"cancel\",\"queue\":\"rt_q\",\"timerKey\":\"never\",\"txn\":\"x\"}");
        assertEquals(200, c.status(), c.body());
        assertTrue(c.json().get("success").asBoolean(), "a timer verdict is no rollback: " + c.body());
        assertEquals("cancelled", c.json().get("results").get(0).get("status").asText());
        assertEquals("absent", c.json().get("results").get(1).get("status").asText());
        assertFalse(c.json().get("results").get(1).get("ok").asBoolean());
        assertFalse(timerGet("rt_q", "a").get("found").asBoolean());
        assertTrue(timerGet("rt_q", "b").get("found").asBoolean());
    }

    @Test
    void aKvAndTimerOrderAfterPushItemsAndAcks() {
        http.push("ro_in", "Default", "1");
        JsonNode pop = http.get("/api/v1/pop/queue/ro_in?batch=1").json();
        JsonNode m = pop.get("messages").get(0);
        String ack = "{\"type\":\"ack\",\"transactionId\":\"" + m.get("transactionId").asText() + "\",\"partitionId\":\""
                + m.get("partitionId").asText() + "\",\"leaseId\":\"" + pop.get("leaseId").asText() + "\"}";
        Reply r = txn(ack + ",{\"type\":\"push\",\"items\":[{\"queue\":\"ro_out\",\"payload\":1},{\"queue\":\"ro_out\",\"payload\":2}]}",
                "{\"op\":\"put\",\"ns\":\"ro\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}", schedule("ro_q", "k", 600_000));
        assertEquals(200, r.status(), r.body());
        JsonNode results = r.json().get("results");
        assertEquals(5, results.size(), r.body());
        assertEquals("ack", results.get(0).get("type").asText());
        assertEquals("push", results.get(2).get("type").asText());
        assertEquals("kv", results.get(3).get("type").asText());
        assertEquals(3, results.get(3).get("index").asInt());
        assertEquals("timer", results.get(4).get("type").asText());
        assertEquals(4, results.get(4).get("index").asInt());
        assertEmpty("ro_in");
    }

    @Test
    void aRiderOnlyBundleCommitsWithoutOperations() {
        Reply r = txn("", "{\"op\":\"put\",\"ns\":\"ronly\",\"key\":\"k\",\"value\":true,\"ttlSeconds\":60}", null);
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get("success").asBoolean(), r.body());
        assertEquals(0, r.json().get("results").get(0).get("index").asInt());
        assertTrue(kvGet("ronly", "k").get("found").asBoolean());
        Reply none = http.post("/api/v1/transaction", "{\"operations\":[],\"kv\":[],\"timers\":[]}");
        assertEquals(400, none.status(), "a call with nothing in it is still refused: " + none.body());
    }

    @Test
    void aLostPreconditionRollsBackPushesKvAndTimers() {
        Reply first = txn(push("rp_out", "{\"attempt\":1}"),
                "{\"op\":\"putIfAbsent\",\"ns\":\"rp\",\"key\":\"gate\",\"value\":{\"owner\":1},\"ttlSeconds\":600,\"required\":true}",
                null);
        assertTrue(first.json().get("success").asBoolean(), first.body());
        long version = first.json().get("results").get(1).get("version").asLong();
        assertEquals(200, http.get("/api/v1/pop/queue/rp_out?batch=10").status());

        Reply second = txn(push("rp_out", "{\"attempt\":2}"),
                "{\"op\":\"put\",\"ns\":\"rp\",\"key\":\"side\",\"value\":1,\"ttlSeconds\":600},"
                        + "{\"op\":\"putIfAbsent\",\"ns\":\"rp\",\"key\":\"gate\",\"value\":{\"owner\":2},\"ttlSeconds\":600,\"required\":true}",
                schedule("rp_q", "t", 600_000));
        assertEquals(200, second.status(), second.body());
        JsonNode body = second.json();
        assertFalse(body.get("success").asBoolean());
        assertFalse(body.get("ok").asBoolean());
        assertEquals("kv_precondition", body.get("reason").asText());
        assertEquals(2, body.get("failedIndex").asInt(), "flat: one push, then the rider's index 1");
        assertEquals("exists", body.get("kvReason").asText());
        assertEquals(version, body.get("version").asLong());
        assertEquals(1, body.get("value").get("owner").asInt(), "the winner's value");
        assertEquals(0, body.get("results").size());
        assertTrue(body.get("error").asText().contains("rolled back"));
        assertEmpty("rp_out");
        assertFalse(kvGet("rp", "side").get("found").asBoolean(), "the rider's other write rolled back");
        assertFalse(timerGet("rp_q", "t").get("found").asBoolean(), "the timer rolled back");
        assertEquals(version, kvGet("rp", "gate").get("version").asLong());
    }

    @Test
    void aRefusedAckRollsBackTheRiders() {
        http.push("ra_in", "Default", "1");
        JsonNode pop = http.get("/api/v1/pop/queue/ra_in?batch=1").json();
        String bogus = "{\"type\":\"ack\",\"transactionId\":\"never-pushed\",\"partitionId\":\""
                + pop.get("messages").get(0).get("partitionId").asText() + "\",\"leaseId\":\"" + pop.get("leaseId").asText() + "\"}";
        Reply r = txn(bogus + "," + push("ra_out", "1"),
                "{\"op\":\"put\",\"ns\":\"ra\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}", schedule("ra_q", "t", 600_000));
        assertEquals(200, r.status(), r.body());
        assertFalse(r.json().get("success").asBoolean(), r.body());
        assertEquals("ack_rejected", r.json().get("reason").asText());
        assertFalse(kvGet("ra", "k").get("found").asBoolean());
        assertFalse(timerGet("ra_q", "t").get("found").asBoolean());
        assertEmpty("ra_out");
    }

    @Test
    void aTimerBeyondTheHorizonRollsBackAndNothingIsWritten() {
        Reply r = txn(push("rh_out", "1"), "{\"op\":\"put\",\"ns\":\"rh\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}",
                schedule("rh_q", "t", 3_600_001));
        assertEquals(200, r.status(), r.body());
        assertFalse(r.json().get("success").asBoolean());
        assertEquals("timer_horizon_exceeded", r.json().get("reason").asText());
        assertEmpty("rh_out");
        assertFalse(kvGet("rh", "k").get("found").asBoolean());
    }

    @Test
    void shapeErrorsOfARiderAre400AndWriteNothing() {
        Reply prefix = txn(push("rs_out", "1"), "{\"op\":\"getPrefix\",\"ns\":\"rs\",\"prefix\":\"a\"}", null);
        assertEquals(400, prefix.status(), prefix.body());
        assertEquals("bad_request", prefix.json().get("reason").asText());
        assertTrue(prefix.json().get("error").asText().contains("kv_get_prefix_not_allowed_in_transaction"), prefix.body());

        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 65; i++) {
            many.append(i == 0 ? "" : ",").append("{\"op\":\"get\",\"ns\":\"rs\",\"key\":\"k").append(i).append("\"}");
        }
        Reply tooMany = txn(push("rs_out", "1"), many.toString(), null);
        assertEquals(400, tooMany.status(), tooMany.body());
        assertTrue(tooMany.json().get("error").asText().contains("kv_too_many_ops"), tooMany.body());

        Reply keys = txn("", "{\"op\":\"getMany\",\"ns\":\"rs\",\"keys\":[" + "\"k\",".repeat(256) + "\"k\"]}", null);
        assertEquals(400, keys.status(), keys.body());
        assertTrue(keys.json().get("error").asText().contains("kv_too_many_keys"), keys.body());

        Reply inside = http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"kv\",\"op\":\"get\"}]}");
        assertEquals(400, inside.status(), "a kv op inside operations is refused by name: " + inside.body());
        assertTrue(inside.json().get("error").asText().contains("top-level kv"), inside.body());

        Reply notArray = http.post("/api/v1/transaction", "{\"operations\":[],\"kv\":{}}");
        assertEquals(400, notArray.status(), notArray.body());

        Reply badTimer = txn(push("rs_out", "1"), null, "{\"op\":\"schedule\",\"queue\":\"rs_q\",\"timerKey\":\"t\"}");
        assertEquals(400, badTimer.status(), badTimer.body());
        assertEmpty("rs_out");
    }

    @Test
    void aPausedKvOrTimerScheduleIs403InsideTheTransaction() {
        try {
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"kv\":false}").status());
            Reply kv = txn(push("rd_out", "1"), "{\"op\":\"get\",\"ns\":\"rd\",\"key\":\"k\"}", null);
            assertEquals(403, kv.status(), kv.body());
            assertEquals("kv_disabled", kv.json().get("error").asText());
            assertEquals("kv_disabled", kv.json().get("reason").asText());
            assertFalse(kv.json().get("success").asBoolean());
            assertEquals(503, http.post("/api/v1/kv", "[{\"op\":\"get\",\"ns\":\"rd\",\"key\":\"k\"}]").status(),
                    "the KV route itself answers the pause with 503");
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"kv\":true,\"timersSchedule\":false}").status());
            Reply timers = txn(push("rd_out", "1"), null, schedule("rd_q", "t", 1000));
            assertEquals(403, timers.status(), timers.body());
            assertEquals("timers_disabled", timers.json().get("reason").asText());
            assertEmpty("rd_out");
        } finally {
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"kv\":true,\"timersSchedule\":true}").status());
        }
    }
}
