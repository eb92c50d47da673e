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

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** With QUEEN_TENANCY_HEADER on, tenants never see each other's queues, even under the same name. */
class TenantIsolationIT {
    static final String A = "aaaaaaaa-0000-4000-8000-00000000000a";
    static final String B = "bbbbbbbb-0000-4000-8000-00000000000b";
    static DatabaseSettings db;
    static Broker broker;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("tenancy");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true"));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply call(String tenant, String method, String path, String body) {
        return new HttpProbe(broker.port()).call(tenant, method, path, body);
    }

    @Test
    void sameQueueNameInTwoTenantsIsTwoQueues() {
        assertEquals(201, call(A, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"orders\",\"payload\":\"from-a\"}]}").status());
        assertEquals(201, call(B, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"orders\",\"payload\":\"from-b\"}]}").status());

        Reply popA = call(A, "GET", "/api/v1/pop/queue/orders?batch=10", null);
        assertEquals(1, popA.json().get("messages").size());
        assertEquals("from-a", popA.json().get("messages").get(0).get("data").asText());
        assertEquals(204, call(null, "GET", "/api/v1/pop/queue/orders", null).status(), "the default tenant has none");

        JsonNode mA = popA.json().get("messages").get(0);
        // B cannot ack, extend or transact on A's partition.
        Reply ackFromB = call(B, "POST", "/api/v1/ack", "{\"transactionId\":\"" + mA.get("transactionId").asText()
                + "\",\"partitionId\":\"" + mA.get("partitionId").asText() + "\"}");
        assertFalse(ackFromB.json().get(0).get("success").asBoolean());
        Reply extendFromB = call(B, "POST", "/api/v1/lease/" + popA.json().get("leaseId").asText() + "/extend", "{}");
        assertEquals(0, extendFromB.json().get("renewed").asInt());
        Reply txFromB = call(B, "POST", "/api/v1/transaction", "{\"operations\":[{\"type\":\"ack\",\"transactionId\":\""
                + mA.get("transactionId").asText() + "\",\"partitionId\":\"" + mA.get("partitionId").asText() + "\"}]}");
        assertFalse(txFromB.json().get("success").asBoolean());

        Reply popB = call(B, "GET", "/api/v1/pop/queue/orders?batch=10", null);
        assertEquals("from-b", popB.json().get("messages").get(0).get("data").asText());
        Reply ackFromA = call(A, "POST", "/api/v1/ack", "{\"transactionId\":\"" + mA.get("transactionId").asText()
                + "\",\"partitionId\":\"" + mA.get("partitionId").asText() + "\",\"leaseId\":\""
                + popA.json().get("leaseId").asText() + "\"}");
        assertTrue(ackFromA.json().get(0).get("success").asBoolean(), ackFromA.body());
    }

    @Test
    void aFetchOfAnotherTenantsQueueAnswersAsIfItDidNotExist() {
        call(A, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"ledger\",\"payload\":\"a-only\"}]}");
        String body = "{\"entries\":[{\"queue\":\"ledger\",\"offset\":0}]}";
        JsonNode fromA = call(A, "POST", "/api/v1/fetch", body).json().get("entries").get(0);
        assertEquals("a-only", fromA.get("records").get(0).get("payload").asText());
        JsonNode fromB = call(B, "POST", "/api/v1/fetch", body).json().get("entries").get(0);
        JsonNode nowhere = call(B, "POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":\"no-such-queue\",\"offset\":0}]}")
                .json().get("entries").get(0);
        assertEquals("UNKNOWN_TOPIC_OR_PARTITION", fromB.get("error").asText());
        assertEquals(0, fromB.get("records").size());
        assertEquals(nowhere.get("error"), fromB.get("error"));
        assertEquals(nowhere.get("highWatermark"), fromB.get("highWatermark"));
    }

    @Test
    void discoveryPopsSeeOnlyTheirTenantsQueues() {
        call(A, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"billing.invoices\",\"payload\":\"a\"}]}");
        assertEquals(204, call(B, "GET", "/api/v1/pop?namespace=billing", null).status());
        assertEquals(200, call(A, "GET", "/api/v1/pop?namespace=billing", null).status());
    }

    @Test
    void deadLettersAndSeeksStayInsideTheirTenant() {
        assertEquals(200, call(A, "POST", "/api/v1/configure", "{\"queue\":\"dl\",\"options\":{\"retryLimit\":0}}").status());
        call(A, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"dl\",\"payload\":\"poison\"}]}");
        call(B, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"dl\",\"payload\":\"fine\"}]}");
        JsonNode pop = call(A, "GET", "/api/v1/pop/queue/dl", null).json();
        JsonNode m = pop.get("messages").get(0);
        Reply nack = call(A, "POST", "/api/v1/ack", "{\"transactionId\":\"" + m.get("transactionId").asText()
                + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                + pop.get("leaseId").asText() + "\",\"status\":\"failed\"}");
        assertTrue(nack.json().get(0).get("dlq").asBoolean(), nack.body());

        assertEquals(0, call(B, "GET", "/api/v1/dlq?queue=dl", null).json().get("messages").size());
        assertEquals(0, call(B, "DELETE", "/api/v1/dlq?queue=dl", null).json().get("deleted").asInt());
        String address = "/api/v1/messages/" + m.get("partitionId").asText() + "/" + m.get("transactionId").asText();
        assertEquals(404, call(B, "POST", address + "/retry", null).status());
        assertEquals(404, call(B, "DELETE", address, null).status());
        assertEquals(1, call(A, "GET", "/api/v1/dlq?queue=dl", null).json().get("messages").size(),
                "B's attempts left A's dead letter in place");

        call(A, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"sk\",\"payload\":\"a1\"}]}");
        call(B, "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"sk\",\"payload\":\"b1\"}]}");
        assertEquals(200, call(B, "POST", "/api/v1/consumer-groups/g/queues/sk/seek", "{\"toEnd\":true}").status());
        Reply popA = call(A, "GET", "/api/v1/pop/queue/sk?consumerGroup=g&subscriptionMode=all", null);
        assertEquals(200, popA.status(), "B's seek did not move A's group");
        assertEquals("a1", popA.json().get("messages").get(0).get("data").asText());
        assertEquals(204, call(B, "GET", "/api/v1/pop/queue/sk?consumerGroup=g&subscriptionMode=all", null).status());
    }

    @Test
    void aMalformedTenantHeaderIs400() {
        Reply r = call("not-a-uuid", "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"x\",\"payload\":1}]}");
        assertEquals(400, r.status());
        assertEquals("invalid x-queen-tenant header (must be a UUID)", r.json().get("error").asText());
    }
}
