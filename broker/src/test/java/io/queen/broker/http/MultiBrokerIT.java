package io.queen.broker.http;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import io.queen.broker.engine.segment.SegmentCodec;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Brokers sharing one database, and a database that goes away mid-traffic. */
class MultiBrokerIT {

    @Test
    void aPopParkedOnOneBrokerIsWokenByAPushOnAnother() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("two_brokers");
        try (Broker a = BrokerFixture.start(db, Map.of()); Broker b = BrokerFixture.start(db, Map.of())) {
            HttpProbe onA = new HttpProbe(a.port());
            HttpProbe onB = new HttpProbe(b.port());
            CompletableFuture<Reply> parked = CompletableFuture.supplyAsync(
                    () -> onA.get("/api/v1/pop/queue/shared?wait=true&timeout=25000"));
            Awaitility.await("an empty queue: the pop on A stays parked").during(Duration.ofMillis(700))
                    .atMost(Duration.ofSeconds(5)).until(() -> !parked.isDone());
            long start = System.nanoTime();
            assertEquals(201, onB.post("/api/v1/push", "{\"items\":[{\"queue\":\"shared\",\"payload\":\"hi\"}]}").status());
            Reply r = parked.get(25, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(200, r.status());
            assertEquals("hi", r.json().get("messages").get(0).get("data").asText());
            // Without a cross-broker wake the pop would only see it at its next idle re-check (1 s).
            assertTrue(ms < 5_000, "woken after " + ms + " ms");
        }
    }

    @Test
    void encryptionConfiguredOnOneBrokerIsUsedByTheNextPushOnAnother() throws Exception {
        String key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        DatabaseSettings db = TestPostgres.freshDatabase("config_across");
        try (Broker a = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", key));
             Broker b = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", key))) {
            HttpProbe onA = new HttpProbe(a.port());
            HttpProbe onB = new HttpProbe(b.port());
            // B caches the queue's options (no encryption) with this push; the cache lives 5 s.
            long cachedAt = System.nanoTime();
            assertEquals(201, onB.post("/api/v1/push", "{\"items\":[{\"queue\":\"cfg\",\"payload\":{\"n\":1}}]}").status());
            assertEquals(200, onA.post("/api/v1/configure",
                    "{\"queue\":\"cfg\",\"options\":{\"encryptionEnabled\":true}}").status());
            // B pushes until a push of its own is stored encrypted, which must happen well inside
            // the cache's lifetime: then only A's notification can have told B.
            Awaitility.await("a push on B is stored encrypted").atMost(Duration.ofSeconds(3))
                    .pollInterval(Duration.ofMillis(50)).until(() -> {
                        assertEquals(201, onB.post("/api/v1/push",
                                "{\"items\":[{\"queue\":\"cfg\",\"payload\":{\"n\":2}}]}").status());
                        return encrypted(db, "DESC");
                    });
            long ms = (System.nanoTime() - cachedAt) / 1_000_000;
            assertTrue(ms < 4_500, "B's cache may have expired by itself: " + ms + " ms");
            assertFalse(encrypted(db, "ASC"), "pushed before the change");
        }
    }

    /** Whether the first ({@code ASC}) or the newest ({@code DESC}) segment's first frame is encrypted. */
    private static boolean encrypted(DatabaseSettings db, String order) throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT s.blob FROM queen.log_segments s ORDER BY s.base_offset " + order
                     + " LIMIT 1")) {
            assertTrue(rs.next());
            return SegmentCodec.decode(rs.getBytes(1)).get(0).encrypted();
        }
    }

    @Test
    void aDatabaseOutageSpoolsPushesAndTheBrokerRecoversByItself() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage");
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            String push = "{\"items\":[{\"queue\":\"outage\",\"payload\":1}]}";
            assertEquals(201, http.post("/api/v1/push", push).status());
            try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS false");
                st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db.database() + "'");
            }
            // A push during the outage is spooled and says so; a pop cannot be served.
            Reply during = http.post("/api/v1/push", push);
            assertEquals(201, during.status(), during.body());
            assertEquals("buffered", during.json().get(0).get("status").asText(), during.body());
            Reply popDuring = http.get("/api/v1/pop/queue/outage");
            assertEquals(503, popDuring.status(), popDuring.body());
            try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS true");
            }
            // Back by itself: healthy, the spool drained, and a push stored at once.
            Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() -> http.get("/health").status() == 200
                    && http.get("/api/v1/system/maintenance").json().path("bufferedMessages").asLong() == 0);
            Reply after = http.post("/api/v1/push", push);
            assertEquals("queued", after.json().get(0).get("status").asText(), after.body());
            Reply r = http.get("/api/v1/pop/queue/outage?batch=10");
            assertEquals(200, r.status());
            assertEquals(3, r.json().get("messages").size(), "before, during (replayed from the spool) and after");
        }
    }

    @Test
    void withoutTheDedupCacheEveryDuplicateIsFoundInSql() {
        DatabaseSettings db = TestPostgres.freshDatabase("dedup_no_cache");
        try (Broker a = BrokerFixture.start(db, Map.of("QUEEN_DEDUP_CACHE", "false"))) {
            HttpProbe onA = new HttpProbe(a.port());
            String xy = "{\"items\":[{\"queue\":\"nc\",\"payload\":1,\"transactionId\":\"X\"},"
                    + "{\"queue\":\"nc\",\"payload\":2,\"transactionId\":\"Y\"}]}";
            String yz = "{\"items\":[{\"queue\":\"nc\",\"payload\":3,\"transactionId\":\"Y\"},"
                    + "{\"queue\":\"nc\",\"payload\":4,\"transactionId\":\"Z\"}]}";
            var first = onA.post("/api/v1/push", xy).json();
            assertEquals("queued", first.get(1).get("status").asText());
            var second = onA.post("/api/v1/push", yz).json();
            assertEquals("duplicate", second.get(0).get("status").asText());
            assertEquals(first.get(1).get("message_id").asText(), second.get(0).get("message_id").asText(),
                    "the original's id, read back from its segment");
            assertEquals("queued", second.get(1).get("status").asText());
        }
    }

    @Test
    void deduplicationHoldsAcrossBrokersWhateverEachBrokersCacheHolds() {
        DatabaseSettings db = TestPostgres.freshDatabase("dedup_two_brokers");
        try (Broker a = BrokerFixture.start(db, Map.of()); Broker b = BrokerFixture.start(db, Map.of())) {
            HttpProbe onA = new HttpProbe(a.port());
            HttpProbe onB = new HttpProbe(b.port());
            String x = "{\"items\":[{\"queue\":\"dd\",\"payload\":1,\"transactionId\":\"X\"}]}";
            String y = "{\"items\":[{\"queue\":\"dd\",\"payload\":2,\"transactionId\":\"Y\"}]}";
            String z = "{\"items\":[{\"queue\":\"dd\",\"payload\":3,\"transactionId\":\"Z\"}]}";
            assertEquals("queued", onA.post("/api/v1/push", x).json().get(0).get("status").asText());
            assertEquals("duplicate", onB.post("/api/v1/push", x).json().get(0).get("status").asText(),
                    "B never wrote X: its probe finds A's row");
            assertEquals("queued", onB.post("/api/v1/push", y).json().get(0).get("status").asText());
            assertEquals("duplicate", onA.post("/api/v1/push", y).json().get(0).get("status").asText(),
                    "B wrote after the block A's cache vouches for: the probe past the block finds it");
            assertEquals("queued", onA.post("/api/v1/push", z).json().get(0).get("status").asText());
            assertEquals("duplicate", onA.post("/api/v1/push", y).json().get(0).get("status").asText(),
                    "B wrote between A's writes: A's cache must not vouch for B's row");
            assertEquals("duplicate", onA.post("/api/v1/push", x).json().get(0).get("status").asText());
            assertEquals("duplicate", onA.post("/api/v1/push", z).json().get(0).get("status").asText(),
                    "a duplicate answered from A's own cache");
        }
    }
}
