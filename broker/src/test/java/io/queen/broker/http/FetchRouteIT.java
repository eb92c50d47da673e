package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code POST /api/v1/fetch} over real HTTP: reads from offsets, bounds, errors, the long poll, bad input. */
class FetchRouteIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("fetch_route");
        broker = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", "00112233445566778899aabbccddeeff"
                + "00112233445566778899aabbccddeeff"));
        http = new HttpProbe(broker.port());
        // Two segments: offsets 0-4 and 5-7.
        http.push("logs", "p1", "{\"n\":0}", "{\"n\":1}", "{\"n\":2, \"s\":\"x\"}", "[3]", "\"four\"");
        http.push("logs", "p1", "{\"n\":5}", "{\"n\":6}", "{\"n\":7}");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static JsonNode fetch(String body) {
        Reply r = http.post("/api/v1/fetch", body);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static JsonNode onlyEntry(String body) {
        JsonNode entries = fetch(body).get("entries");
        assertEquals(1, entries.size());
        return entries.get(0);
    }

    static List<Long> offsets(JsonNode entry) {
        List<Long> out = new ArrayList<>();
        entry.get("records").forEach(r -> out.add(r.get("offset").asLong()));
        return out;
    }

    @Test
    void readsEveryRecordFromAnOffsetWithItsPayloadAsPushedAndTheBounds() {
        JsonNode e = onlyEntry("{\"entries\":[{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":0}]}");
        assertEquals("logs", e.get("queue").asText());
        assertEquals("p1", e.get("partition").asText());
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L), offsets(e));
        assertEquals(8, e.get("highWatermark").asLong());
        assertEquals(0, e.get("logStartOffset").asLong());
        assertFalse(e.has("error"));
        JsonNode records = e.get("records");
        assertEquals(2, records.get(2).get("payload").get("n").asInt());
        assertEquals("x", records.get(2).get("payload").get("s").asText());
        assertEquals(3, records.get(3).get("payload").get(0).asInt());
        assertEquals("four", records.get(4).get("payload").asText());
        assertFalse(records.get(0).get("transactionId").asText().isEmpty());
        assertTrue(records.get(0).get("ts").asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"));

        // From the middle of the first segment.
        JsonNode mid = onlyEntry("{\"entries\":[{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":3}]}");
        assertEquals(List.of(3L, 4L, 5L, 6L, 7L), offsets(mid));
    }

    @Test
    void aFetchIsNotAPopNoLeaseNoCursor() {
        String body = "{\"entries\":[{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":0}]}";
        assertEquals(fetch(body).toString().replaceAll("\"ts\":\"[^\"]*\"", ""),
                fetch(body).toString().replaceAll("\"ts\":\"[^\"]*\"", ""), "the same offsets, the same records");
        // A consumer group that never popped still starts from the first message.
        Reply pop = http.get("/api/v1/pop/queue/logs/partition/p1?batch=1&wait=false&consumerGroup=fresh"
                + "&subscriptionMode=all");
        assertEquals(200, pop.status(), pop.body());
        assertEquals(0, pop.json().get("messages").get(0).get("data").get("n").asInt());
    }

    @Test
    void offsetsOutsideTheLogAndUnknownQueuesAreEntryErrors() {
        JsonNode entries = fetch("{\"entries\":["
                + "{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":8},"
                + "{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":9},"
                + "{\"queue\":\"nope\",\"partition\":\"p1\",\"offset\":0},"
                + "{\"queue\":\"logs\",\"partition\":\"never-written\",\"offset\":0},"
                + "{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":7}]}").get("entries");
        assertEquals(5, entries.size());
        // Caught up: valid and empty.
        assertEquals(0, entries.get(0).get("records").size());
        assertFalse(entries.get(0).has("error"));
        assertEquals(8, entries.get(0).get("highWatermark").asLong());
        assertEquals("OFFSET_OUT_OF_RANGE", entries.get(1).get("error").asText());
        assertEquals(8, entries.get(1).get("highWatermark").asLong());
        assertEquals("UNKNOWN_TOPIC_OR_PARTITION", entries.get(2).get("error").asText());
        assertEquals(0, entries.get(2).get("highWatermark").asLong());
        // A partition nothing was pushed to is an empty log, not an error.
        assertFalse(entries.get(3).has("error"));
        assertEquals(0, entries.get(3).get("highWatermark").asLong());
        assertEquals(List.of(7L), offsets(entries.get(4)));
    }

    @Test
    void maxBytesStopsAfterTheFirstSegmentAndTheNextFetchResumes() {
        JsonNode first = onlyEntry("{\"entries\":[{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":0,\"maxBytes\":1}]}");
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), offsets(first), "one segment is always delivered");
        JsonNode next = onlyEntry("{\"entries\":[{\"queue\":\"logs\",\"partition\":\"p1\",\"offset\":5,\"maxBytes\":1}]}");
        assertEquals(List.of(5L, 6L, 7L), offsets(next));
        // A partition number is its name.
        http.push("numbered", "3", "{\"k\":1}");
        assertEquals(List.of(0L), offsets(onlyEntry("{\"entries\":[{\"queue\":\"numbered\",\"partition\":3,\"offset\":0}]}")));
    }

    @Test
    void aCaughtUpFetchWaitsForTheNextPush() throws Exception {
        http.push("tail", "p", "{\"n\":0}");
        CompletableFuture<JsonNode> waiting = CompletableFuture.supplyAsync(() -> onlyEntry(
                "{\"entries\":[{\"queue\":\"tail\",\"partition\":\"p\",\"offset\":1}],\"maxWaitMs\":20000}"));
        await("nothing to read yet: the fetch stays waiting").during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(5)).until(() -> !waiting.isDone());
        http.push("tail", "p", "{\"n\":1}");
        JsonNode e = waiting.get(15, TimeUnit.SECONDS);
        assertEquals(List.of(1L), offsets(e));
        assertEquals(1, e.get("records").get(0).get("payload").get("n").asInt());
        // minBytes 0 never waits.
        assertEquals(0, onlyEntry("{\"entries\":[{\"queue\":\"tail\",\"partition\":\"p\",\"offset\":2}],"
                + "\"maxWaitMs\":20000,\"minBytes\":0}").get("records").size());
    }

    @Test
    void payloadsEncryptedAtRestAreReadInTheClear() throws SQLException {
        assertEquals(200, http.post("/api/v1/configure",
                "{\"queue\":\"sealed\",\"options\":{\"encryptionEnabled\":true}}").status());
        http.push("sealed", "p", "{\"secret\":\"plain words\"}");
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT s.blob FROM queen.log_segments s JOIN queen.log_partitions p"
                     + " ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'sealed'")) {
            assertTrue(rs.next());
            byte[] atRest = SegmentCodec.decode(rs.getBytes(1)).getFirst().payload();
            assertFalse(new String(atRest, StandardCharsets.UTF_8).contains("plain words"), "encrypted at rest");
        }
        JsonNode e = onlyEntry("{\"entries\":[{\"queue\":\"sealed\",\"partition\":\"p\",\"offset\":0}]}");
        assertEquals("plain words", e.get("records").get(0).get("payload").get("secret").asText());
    }

    @Test
    void badBodiesAre400WithAJsonError() {
        StringBuilder tooMany = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < 1025; i++) {
            tooMany.append(i == 0 ? "" : ",").append("{\"queue\":\"logs\",\"offset\":0}");
        }
        for (String body : List.of("not json", "[1]", "{\"entries\":{}}", "{\"entries\":[{\"offset\":0}]}",
                "{\"entries\":[{\"queue\":\"logs\"}]}", "{\"entries\":[{\"queue\":\"logs\",\"offset\":-1}]}",
                "{\"entries\":[{\"queue\":\"logs\",\"offset\":\"0\"}]}", "{\"entries\":[],\"maxWaitMs\":-5}",
                "{\"entries\":[{\"queue\":\"logs\",\"offset\":0,\"partition\":true}]}", tooMany + "]}")) {
            Reply r = http.post("/api/v1/fetch", body);
            assertEquals(400, r.status(), body.length() > 80 ? body.substring(0, 80) : body);
            assertTrue(r.json().get("error").asText().startsWith("bad body"), r.body());
        }
        assertEquals("{\"entries\":[]}", http.post("/api/v1/fetch", "{}").body());
    }
}
