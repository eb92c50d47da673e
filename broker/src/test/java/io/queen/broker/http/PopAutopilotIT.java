package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.PopAutopilot;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.CapturedLog;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pop autopilot over HTTP: a grouped queue-level pop that leaves partitions or batch to the broker
 * gets them sized and echoed; whatever the pop sent is kept, and pops outside autopilot's scope
 * are answered as before.
 */
class PopAutopilotIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("pop_autopilot");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Three messages in each of n partitions. */
    static void fill(String queue, int partitions) {
        for (int p = 0; p < partitions; p++) {
            http.push(queue, "p" + p, "{\"n\":0}", "{\"n\":1}", "{\"n\":2}");
        }
    }

    static JsonNode pop(String query) {
        Reply r = http.get("/api/v1/pop/" + query);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    @Test
    void theWidthFollowsTheReadyPartitionsAndTheBatchIsTheDelegatedOne() {
        fill("wide", 20);
        JsonNode first = pop("queue/wide?consumerGroup=g&subscriptionMode=all&autopilot=true");
        assertEquals(1, first.get("autopilot").get("partitions").asInt(), "nothing known ready yet: " + first);
        assertEquals(100, first.get("autopilot").get("batch").asInt());
        assertEquals(3, first.get("messages").size());

        JsonNode second = pop("queue/wide?consumerGroup=g&autopilot=true");
        assertEquals(19, second.get("autopilot").get("partitions").asInt(), "the first scan found 19 more: " + second);
        assertEquals(19, second.get("partitionsClaimed").asInt());
        assertEquals(57, second.get("messages").size());
    }

    @Test
    void aKnobThePopSentIsKept() {
        fill("kept", 10);
        JsonNode widthSent = pop("queue/kept?consumerGroup=g&subscriptionMode=all&autopilot=true&partitions=2");
        assertEquals(2, widthSent.get("autopilot").get("partitions").asInt(), widthSent.toString());
        assertEquals(100, widthSent.get("autopilot").get("batch").asInt());
        assertEquals(6, widthSent.get("messages").size());

        JsonNode batchSent = pop("queue/kept?consumerGroup=h&subscriptionMode=all&autopilot=true&batch=2");
        assertEquals(2, batchSent.get("autopilot").get("batch").asInt(), batchSent.toString());
        assertEquals(2, batchSent.get("messages").size());

        JsonNode both = pop("queue/kept?consumerGroup=i&subscriptionMode=all&autopilot=true&batch=4&partitions=3");
        assertFalse(both.has("autopilot"), "nothing left to the broker: " + both);
        assertEquals(4, both.get("messages").size());
    }

    @Test
    void popsOutsideItsScopeAreAnsweredAsBefore() {
        fill("scope", 5);
        JsonNode queueMode = pop("queue/scope?autopilot=true");
        assertFalse(queueMode.has("autopilot"), "queue mode: " + queueMode);
        assertEquals(3, queueMode.get("messages").size(), "one partition, the batch of 200 not used up");

        JsonNode pinned = pop("queue/scope/partition/p1?consumerGroup=g&subscriptionMode=all&autopilot=true");
        assertFalse(pinned.has("autopilot"), "a named partition: " + pinned);

        JsonNode notAsked = pop("queue/scope?consumerGroup=h&subscriptionMode=all");
        assertFalse(notAsked.has("autopilot"), notAsked.toString());
    }

    @Test
    void switchedOffTheParameterIsIgnored() {
        try (Broker off = BrokerFixture.start(db, Map.of("QUEEN_POP_AUTOPILOT", "off"))) {
            HttpProbe offHttp = new HttpProbe(off.port());
            for (int p = 0; p < 3; p++) {
                offHttp.push("off", "p" + p, "{\"n\":0}");
            }
            Reply r = offHttp.get("/api/v1/pop/queue/off?consumerGroup=g&subscriptionMode=all&autopilot=true");
            assertEquals(200, r.status(), r.body());
            assertFalse(r.json().has("autopilot"), r.body());
            assertEquals(1, r.json().get("partitionsClaimed").asInt(), "the default width of one");
        }
    }

    @Test
    void inShadowThePopKeepsItsKnobsAndTheChoiceIsOnlyLogged() {
        try (Broker shadow = BrokerFixture.start(db, Map.of("QUEEN_POP_AUTOPILOT", "shadow"));
             CapturedLog log = CapturedLog.of(PopAutopilot.class)) {
            HttpProbe shadowHttp = new HttpProbe(shadow.port());
            for (int p = 0; p < 20; p++) {
                shadowHttp.push("shadow", "p" + p, "{\"n\":0}", "{\"n\":1}", "{\"n\":2}");
            }
            for (int i = 0; i < 2; i++) {
                Reply r = shadowHttp.get("/api/v1/pop/queue/shadow?consumerGroup=g&subscriptionMode=all&autopilot=true");
                assertEquals(200, r.status(), r.body());
                assertFalse(r.json().has("autopilot"), "nothing applied, nothing echoed: " + r.body());
                assertEquals(1, r.json().get("partitionsClaimed").asInt(), "the default width of one: " + r.body());
                assertEquals(3, r.json().get("messages").size());
            }
            assertTrue(log.messages().stream().anyMatch(m -> m.contains("pop autopilot (shadow)")
                    && m.contains("would claim partitions=") && m.contains("the pop claims partitions=1 batch=200")),
                    log.messages().toString());
        }
    }
}
