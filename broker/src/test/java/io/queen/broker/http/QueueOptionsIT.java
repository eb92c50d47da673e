package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.DatabaseClock;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Queue options that change the data plane: encryption at rest, delayed processing, window buffer. */
class QueueOptionsIT {
    static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("queue_options");
        broker = BrokerFixture.start(db, Map.of("QUEEN_ENCRYPTION_KEY", KEY));
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void createQueue(String queue, String set) {
        // Queue options are written directly until /configure exists (management plane).
        BrokerFixture.sql(db, "INSERT INTO queen.queues (name) VALUES ('" + queue + "')");
        BrokerFixture.sql(db, "UPDATE queen.queues SET " + set + " WHERE name = '" + queue + "'");
    }

    @Test
    void anEncryptedQueueStoresEnvelopesAndServesPlaintext() throws Exception {
        createQueue("secret", "encryption_enabled = true");
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"secret\",\"payload\":{\"card\":\"4111\"}}]}");
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT s.blob FROM queen.log_segments s JOIN queen.log_partitions p"
                     + " ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'secret'")) {
            assertTrue(rs.next());
            Frame f = SegmentCodec.decode(rs.getBytes(1)).get(0);
            assertTrue(f.encrypted());
            String stored = new String(f.payload(), StandardCharsets.UTF_8);
            assertFalse(stored.contains("4111"), stored);
            assertTrue(PayloadCipher.looksLikeEnvelope(f.payload()));
        }
        Reply r = http.get("/api/v1/pop/queue/secret");
        assertEquals("4111", r.json().get("messages").get(0).get("data").get("card").asText());
    }

    @Test
    void delayedProcessingHoldsMessagesUntilTheyAreOldEnough() throws Exception {
        createQueue("delayed", "delayed_processing = 2");
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"delayed\",\"payload\":1}]}");
        assertEquals(204, http.get("/api/v1/pop/queue/delayed").status());
        DatabaseClock.awaitNewestSegmentOlderThan(db, "delayed", Duration.ofSeconds(2));
        assertEquals(200, http.get("/api/v1/pop/queue/delayed").status());
    }

    @Test
    void aWindowBufferHoldsAPartitionWhileItIsStillBeingWritten() throws Exception {
        createQueue("windowed", "window_buffer = 2");
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"windowed\",\"payload\":1}]}");
        assertEquals(204, http.get("/api/v1/pop/queue/windowed").status());
        DatabaseClock.awaitNewestSegmentOlderThan(db, "windowed", Duration.ofSeconds(2));
        JsonNode r = http.get("/api/v1/pop/queue/windowed").json();
        assertEquals(1, r.get("messages").size());
    }
}
