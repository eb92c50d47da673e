package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.store.SchemaApplier;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The maintenance switches over real HTTP: push maintenance spools and loses nothing, pop
 * maintenance answers 204, the flags travel between brokers through queen.system_state, and a
 * spool left by a stopped broker replays when it comes back.
 */
class MaintenanceIT {
    private final List<Broker> running = new ArrayList<>();

    @TempDir
    Path spools;

    @AfterEach
    void stop() {
        running.forEach(Broker::close);
    }

    private Broker start(DatabaseSettings db, String spool) {
        Map<String, String> vars = new HashMap<>();
        vars.put("PG_HOST", db.host());
        vars.put("PORT", "0");
        vars.put("DB_POOL_SIZE", "8");
        vars.put("FILE_BUFFER_DIR", spools.resolve(spool).toString());
        vars.put("FILE_BUFFER_FLUSH_MS", "20");
        vars.put("FILE_BUFFER_MAX_BATCH", "3");
        vars.put("FILE_BUFFER_EVENTS_PER_FILE", "4");
        vars.put("QUEEN_SWITCHES_REFRESH_MS", "200");
        Env env = new Env(vars);
        Broker b = Broker.start(BrokerSettings.from(env).withDatabase(db), SchemaApplier.Options.defaults(),
                MaintenanceSettings.from(env));
        running.add(b);
        return b;
    }

    private static String items(String queue, String partition, int from, int to, boolean withTxn) {
        StringBuilder s = new StringBuilder("{\"items\":[");
        for (int i = from; i < to; i++) {
            if (i > from) {
                s.append(',');
            }
            s.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"").append(partition)
                    .append("\",\"payload\":{\"n\":").append(i).append('}');
            if (withTxn) {
                s.append(",\"transactionId\":\"").append(queue).append("-t-").append(i).append('"');
            }
            s.append('}');
        }
        return s.append("]}").toString();
    }

    /** Every transactionId popped from the queue (and acked), until it answers 204. */
    private static List<String> drainQueue(HttpProbe http, String queue) {
        List<String> txns = new ArrayList<>();
        while (true) {
            Reply r = http.get("/api/v1/pop/queue/" + queue + "?batch=100&partitions=10&autoAck=true");
            if (r.status() == 204) {
                return txns;
            }
            assertEquals(200, r.status(), r.body());
            r.json().get("messages").forEach(m -> txns.add(m.get("transactionId").asText()));
        }
    }

    private static long queueRows(DatabaseSettings db, String queue) throws SQLException {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.queues WHERE name = '" + queue + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void pushesDuringMaintenanceAreBufferedAndEachIsPoppableExactlyOnceAfterwards() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("maint_push");
        HttpProbe http = new HttpProbe(start(db, "a").port());

        Reply on = http.post("/api/v1/system/maintenance", "{\"enabled\":true}");
        assertEquals(200, on.status(), on.body());
        assertTrue(on.json().get("maintenanceMode").asBoolean());
        assertEquals("Maintenance mode ENABLED. All PUSHes routing to file buffer.", on.json().get("message").asText());
        assertTrue(on.json().has("bufferedMessages") && on.json().has("bufferHealthy"));

        Set<String> pushed = new HashSet<>();
        Reply first = http.post("/api/v1/push", items("spooled", "p1", 0, 5, true));
        Reply second = http.post("/api/v1/push", items("spooled", "p2", 5, 9, false));
        // The same transactionId again: buffered now, deduplicated when replayed.
        Reply again = http.post("/api/v1/push", items("spooled", "p1", 0, 2, true));
        for (Reply r : List.of(first, second, again)) {
            assertEquals(201, r.status(), r.body());
            for (JsonNode item : r.json()) {
                assertEquals("buffered", item.get("status").asText(), r.body());
                assertEquals("spooled", item.get("queueName").asText());
                pushed.add(item.get("transaction_id").asText());
            }
        }
        assertEquals(9, pushed.size());
        assertEquals(0, queueRows(db, "spooled"), "a push under maintenance never touches PostgreSQL");

        JsonNode status = http.get("/api/v1/system/maintenance").json();
        assertTrue(status.get("maintenanceMode").asBoolean());
        assertFalse(status.get("popMaintenanceMode").asBoolean());
        assertEquals(11, status.get("bufferedMessages").asLong());
        assertTrue(status.get("bufferHealthy").asBoolean());
        JsonNode stats = status.get("bufferStats");
        assertEquals(11, stats.get("pendingCount").asLong());
        assertEquals(0, stats.get("failedCount").asLong());
        assertTrue(stats.get("dbHealthy").asBoolean());
        assertTrue(stats.get("failedFiles").get("count").asInt() >= 2, "rotated every 4 items: " + stats);
        assertTrue(stats.get("failedFiles").get("totalBytes").asLong() > 0);
        assertEquals(0, stats.get("failedFiles").get("qos0Count").asInt());

        assertEquals(204, http.get("/api/v1/pop/queue/spooled").status(), "nothing is in the database yet");

        Reply off = http.post("/api/v1/system/maintenance", "{\"enabled\":false}");
        assertEquals(200, off.status());
        assertFalse(off.json().get("maintenanceMode").asBoolean());
        assertEquals("Maintenance mode DISABLED. Background processor will drain buffer to DB.",
                off.json().get("message").asText());
        Awaitility.await().atMost(30, TimeUnit.SECONDS)
                .until(() -> http.get("/api/v1/system/maintenance").json().get("bufferedMessages").asLong() == 0);

        List<String> popped = drainQueue(http, "spooled");
        assertEquals(9, popped.size(), "every distinct message once: " + popped);
        assertEquals(pushed, new HashSet<>(popped));
        assertTrue(popped.containsAll(List.of("spooled-t-0", "spooled-t-4")), "client transaction ids are kept");
        try (Stream<Path> left = Files.list(spools.resolve("a"))) {
            assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith("spool-")), "replayed files are gone");
        }
        Reply normal = http.post("/api/v1/push", items("spooled", "p1", 20, 21, true));
        assertEquals("queued", normal.json().get(0).get("status").asText(), "back to the normal path");
    }

    @Test
    void popMaintenanceAnswersEveryPopWithABare204() {
        DatabaseSettings db = TestPostgres.freshDatabase("maint_pop");
        HttpProbe http = new HttpProbe(start(db, "a").port());
        assertEquals(201, http.post("/api/v1/push",
                "{\"items\":[{\"queue\":\"held.back\",\"partition\":\"p\",\"payload\":1}]}").status());

        Reply get = http.get("/api/v1/system/maintenance/pop");
        assertFalse(get.json().get("popMaintenanceMode").asBoolean());
        assertEquals("Pop maintenance mode is OFF. Normal operation.", get.json().get("message").asText());

        Reply on = http.post("/api/v1/system/maintenance/pop", "{\"enabled\":true}");
        assertEquals(200, on.status());
        assertTrue(on.json().get("popMaintenanceMode").asBoolean());
        assertEquals("Pop maintenance mode ENABLED. All POP operations will return empty arrays.",
                on.json().get("message").asText());
        assertEquals("Pop maintenance mode is ON. All POP operations return empty arrays.",
                http.get("/api/v1/system/maintenance/pop").json().get("message").asText());
        for (String path : List.of("/api/v1/pop/queue/held.back", "/api/v1/pop/queue/held.back/partition/p",
                "/api/v1/pop?namespace=held", "/api/v1/pop?namespace=held&wait=true&timeout=20000")) {
            Reply r = http.get(path);
            assertEquals(204, r.status(), path);
            assertEquals("", r.body(), "a 204 carries no body");
        }
        assertTrue(http.get("/api/v1/system/maintenance").json().get("popMaintenanceMode").asBoolean());
        assertEquals(201, http.post("/api/v1/push",
                "{\"items\":[{\"queue\":\"held.back\",\"partition\":\"p\",\"payload\":2}]}").status(),
                "pushes still work");

        Reply off = http.post("/api/v1/system/maintenance/pop", "{\"enabled\":false}");
        assertEquals("Pop maintenance mode DISABLED. Normal operation resumed.", off.json().get("message").asText());
        Reply r = http.get("/api/v1/pop/queue/held.back?batch=10");
        assertEquals(200, r.status());
        assertEquals(2, r.json().get("messages").size());
    }

    @Test
    void aFlagFlippedOnOneBrokerIsInForceOnAnotherBrokerOfTheSameDatabase() {
        DatabaseSettings db = TestPostgres.freshDatabase("maint_two");
        HttpProbe a = new HttpProbe(start(db, "a").port());
        HttpProbe b = new HttpProbe(start(db, "b").port());

        assertEquals(200, a.post("/api/v1/system/maintenance/pop", "{\"enabled\":true}").status());
        assertEquals(200, a.post("/api/v1/system/maintenance", "{\"enabled\":true}").status());
        // GET /maintenance/pop reads only the in-process flag: B's refresh loop must have adopted it.
        Awaitility.await().atMost(10, TimeUnit.SECONDS)
                .until(() -> b.get("/api/v1/system/maintenance/pop").json().get("popMaintenanceMode").asBoolean());
        assertEquals(204, b.get("/api/v1/pop/queue/shared").status());
        Reply onB = b.post("/api/v1/push", items("shared", "p", 0, 3, true));
        assertEquals(201, onB.status());
        onB.json().forEach(i -> assertEquals("buffered", i.get("status").asText()));

        // Turned off on A: B sees it, drains its own spool into the shared database.
        a.post("/api/v1/system/maintenance", "{\"enabled\":false}");
        a.post("/api/v1/system/maintenance/pop", "{\"enabled\":false}");
        Awaitility.await().atMost(20, TimeUnit.SECONDS)
                .until(() -> b.get("/api/v1/system/maintenance").json().get("bufferedMessages").asLong() == 0
                        && !b.get("/api/v1/system/maintenance/pop").json().get("popMaintenanceMode").asBoolean());
        assertEquals(List.of("shared-t-0", "shared-t-1", "shared-t-2"), drainQueue(a, "shared"));
    }

    @Test
    void aBrokerRestartedWithANonEmptySpoolReplaysItBeforeServing() throws IOException {
        DatabaseSettings db = TestPostgres.freshDatabase("maint_restart");
        Broker first = start(db, "a");
        HttpProbe http = new HttpProbe(first.port());
        http.post("/api/v1/system/maintenance", "{\"enabled\":true}");
        assertEquals(201, http.post("/api/v1/push", items("kept", "p", 0, 6, true)).status());
        first.close();
        running.remove(first);
        // The last write of the stopped broker was cut short: half a record at the end of its newest file.
        Path newest;
        try (Stream<Path> files = Files.list(spools.resolve("a"))) {
            newest = files.filter(p -> p.getFileName().toString().startsWith("spool-")).sorted()
                    .reduce((x, y) -> y).orElseThrow();
        }
        Files.write(newest, new byte[] {0, 0, 1, 0, 7, 7}, StandardOpenOption.APPEND);

        // Maintenance is turned off elsewhere while that broker is down.
        HttpProbe other = new HttpProbe(start(db, "b").port());
        other.post("/api/v1/system/maintenance", "{\"enabled\":false}");

        HttpProbe again = new HttpProbe(start(db, "a").port());
        JsonNode status = again.get("/api/v1/system/maintenance").json();
        assertEquals(0, status.get("bufferedMessages").asLong(), "replayed at boot, before serving: " + status);
        assertEquals(List.of("kept-t-0", "kept-t-1", "kept-t-2", "kept-t-3", "kept-t-4", "kept-t-5"),
                drainQueue(again, "kept"));
    }

    @Test
    void badSwitchBodiesAre400() {
        DatabaseSettings db = TestPostgres.freshDatabase("maint_bad");
        HttpProbe http = new HttpProbe(start(db, "a").port());
        for (String path : List.of("/api/v1/system/maintenance", "/api/v1/system/maintenance/pop")) {
            Reply missing = http.post(path, "{}");
            assertEquals(400, missing.status());
            assertEquals("enabled (boolean) is required", missing.json().get("error").asText());
            assertEquals(400, http.post(path, "{\"enabled\":\"yes\"}").status());
            Reply junk = http.post(path, "{enabled");
            assertEquals(400, junk.status());
            assertTrue(junk.json().get("error").asText().startsWith("bad body: "), junk.body());
            assertEquals(400, http.post(path, "").status());
        }
        assertFalse(http.get("/api/v1/system/maintenance").json().get("maintenanceMode").asBoolean());
    }
}
