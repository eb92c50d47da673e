package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A pushed message's producerSub is the pushing token's {@code sub}, shown where the reference
 * shows it (pop answers, the message listing and a message's detail), carried through the spool,
 * and never what the request body says.
 */
class JwtProducerSubIT {
    @TempDir
    static Path spool;
    static DatabaseSettings db;
    static Broker secured;
    static Broker open;
    static HttpProbe http;
    static final String CONSUMER = Jwt.hs256("consumer-1", "read-write");
    static final String ADMIN = Jwt.hs256("ops-1", "admin");

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("jwt_producer_sub");
        secured = BrokerFixture.startWithSpool(db, spool, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET));
        // Its own database: the maintenance switch flipped on the secured broker must not reach it.
        open = BrokerFixture.start(TestPostgres.freshDatabase("jwt_producer_sub_open"), Map.of());
        http = new HttpProbe(secured.port());
    }

    @AfterAll
    static void stop() {
        open.close();
        secured.close();
    }

    @Test
    void theTokensSubjectIsStampedAndTheBodysClaimIgnored() {
        String producer = Jwt.hs256("svc-orders", "write-only");
        Reply pushed = push(http, producer, "stamped", "{\"producerSub\":\"ceo\",\"items\":[{\"queue\":\"stamped\","
                + "\"producerSub\":\"ceo\",\"producer_sub\":\"ceo\",\"payload\":{\"n\":1}}]}");
        String txn = pushed.json().get(0).get("transaction_id").asText();

        JsonNode popped = pop(http, "stamped");
        JsonNode m = popped.get("messages").get(0);
        assertEquals("svc-orders", m.get("producerSub").asText(), popped.toString());
        assertEquals(1, m.get("data").get("n").asInt());

        JsonNode listed = get(http, "/api/v1/messages?queue=stamped").get("messages").get(0);
        assertEquals("svc-orders", listed.get("producerSub").asText(), listed.toString());
        JsonNode detail = get(http, "/api/v1/messages/" + m.get("partitionId").asText() + "/" + txn);
        assertEquals("svc-orders", detail.get("producerSub").asText(), detail.toString());
    }

    @Test
    void aTokenWithoutSubjectAndABrokerWithoutAuthStampNothing() {
        String anonymous = Jwt.hs256(null, "read-write");
        push(http, anonymous, "unsigned", "{\"items\":[{\"queue\":\"unsigned\",\"producerSub\":\"ceo\",\"payload\":1}]}");
        assertTrue(pop(http, "unsigned").get("messages").get(0).get("producerSub").isNull());

        // Without JWT anyone can push, and still nobody can name the producer.
        HttpProbe plain = new HttpProbe(open.port());
        push(plain, null, "open", "{\"items\":[{\"queue\":\"open\",\"producerSub\":\"ceo\",\"payload\":1}]}");
        Reply r = plain.get("/api/v1/pop/queue/open?wait=false");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get("messages").get(0).get("producerSub").isNull(), r.body());
    }

    @Test
    void aPushSpooledUnderMaintenanceReplaysWithItsProducer() {
        Map<String, String> admin = Map.of("Authorization", "Bearer " + ADMIN);
        assertEquals(200, http.call("POST", "/api/v1/system/maintenance", "{\"enabled\":true}", admin).status());
        try {
            Reply pushed = push(http, Jwt.hs256("svc-late", "write-only"), "spooled",
                    "{\"items\":[{\"queue\":\"spooled\",\"payload\":{\"n\":7}}]}");
            assertEquals("buffered", pushed.json().get(0).get("status").asText(), pushed.body());
        } finally {
            assertEquals(200, http.call("POST", "/api/v1/system/maintenance", "{\"enabled\":false}", admin).status());
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> http.call("GET", "/api/v1/system/maintenance",
                null, admin).json().get("bufferedMessages").asLong() == 0);
        JsonNode m = pop(http, "spooled").get("messages").get(0);
        assertEquals("svc-late", m.get("producerSub").asText(), m.toString());
        assertEquals(7, m.get("data").get("n").asInt());
    }

    @Test
    void theTransactionRouteStampsNothingAsInTheReference() {
        Reply r = http.call("POST", "/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":"
                + "\"txn-pushed\",\"payload\":{\"n\":1}}]}]}", Map.of("Authorization", "Bearer " + CONSUMER));
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json().get("success").asBoolean(), r.body());
        assertTrue(pop(http, "txn-pushed").get("messages").get(0).get("producerSub").isNull());
    }

    // ---------------------------------------------------------------- helpers

    static Reply push(HttpProbe probe, String token, String queue, String body) {
        Reply r = probe.call("POST", "/api/v1/push", body, token == null ? Map.of() : Map.of("Authorization", "Bearer " + token));
        assertEquals(201, r.status(), queue + ": " + r.body());
        return r;
    }

    static JsonNode pop(HttpProbe probe, String queue) {
        Reply r = probe.call("GET", "/api/v1/pop/queue/" + queue + "?wait=false", null, Map.of("Authorization", "Bearer " + CONSUMER));
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static JsonNode get(HttpProbe probe, String path) {
        Reply r = probe.call("GET", path, null, Map.of("Authorization", "Bearer " + CONSUMER));
        assertEquals(200, r.status(), r.body());
        return r.json();
    }
}
