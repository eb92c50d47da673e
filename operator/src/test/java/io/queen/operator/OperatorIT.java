package io.queen.operator;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.support.Conflicts;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.QueueOptions;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.crd.TenantReference;
import io.queen.operator.crd.TenantSpec;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.reconcile.TenantIds;
import io.queen.operator.support.OperatorHarness;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Declared;
import io.queen.operator.support.RealBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator in the test JVM against the fabric8 mock API server (CRUD mode) and the real broker
 * on a real PostgreSQL: every assertion about the broker is made through its HTTP API.
 */
@EnableKubernetesMockClient(crud = true)
class OperatorIT {
    private static final String NS = "apps";
    private static final Duration WAIT = Duration.ofSeconds(60);

    static KubernetesClient client;
    private static RealBroker broker;
    private static BrokerApi api;
    private static QueenOperator operator;

    @BeforeAll
    static void start() throws IOException {
        broker = RealBroker.start("operator");
        api = new BrokerApi(broker.url());
        OperatorHarness.installCrds(client);
        // A one-second resync, so drift is repaired within the test's patience.
        operator = OperatorHarness.start(client, broker.url(),
                OperatorHarness.fastTimings(Duration.ofSeconds(1), Duration.ofMinutes(10)), false, Clock.systemUTC());
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void aQueueResourceIsCreatedEditedAndDeletedOnTheBroker() throws Exception {
        Queue queue = queue("orders", QueueDeletionPolicy.Delete);
        queue.getSpec().setNamespace("billing");
        queue.getSpec().setTask("invoice");
        queue.getSpec().setOptions(new QueueOptions().withLeaseTime(120).withRetryLimit(7).withDedupWindowSeconds(60));
        client.resource(queue).create();

        awaitReady("orders");
        JsonNode created = brokerQueue(null, "orders").orElseThrow();
        assertEquals("billing", created.path("namespace").asText());
        assertEquals("invoice", created.path("task").asText());
        assertEquals(120, created.path("options").path("leaseTime").asInt());
        assertEquals(7, created.path("options").path("retryLimit").asInt());
        assertEquals(60, created.path("options").path("dedupWindowSeconds").asInt());

        Conflicts.retrying(() -> client.resources(Queue.class).inNamespace(NS).withName("orders").edit(q -> {
            q.getSpec().setNamespace(null);
            q.getSpec().setOptions(new QueueOptions().withLeaseTime(30));
            return q;
        }));

        await().atMost(WAIT).until(() -> brokerQueue(null, "orders").map(q -> q.path("options").path("leaseTime").asInt())
                .orElse(0) == 30);
        JsonNode edited = brokerQueue(null, "orders").orElseThrow();
        assertEquals("", edited.path("namespace").asText(), "a label removed from the spec is cleared");
        assertEquals(3, edited.path("options").path("retryLimit").asInt(), "an option removed from the spec is reset");
        await().atMost(WAIT).until(() -> get("orders").getStatus().getObservedGeneration() == 2L);

        client.resources(Queue.class).inNamespace(NS).withName("orders").delete();

        await().atMost(WAIT).until(() -> get("orders") == null);
        assertTrue(brokerQueue(null, "orders").isEmpty(), "deletionPolicy Delete deleted the queue");
    }

    @Test
    void aRetainedQueueOutlivesItsResource() throws Exception {
        client.resource(queue("kept", QueueDeletionPolicy.Retain)).create();
        awaitReady("kept");

        client.resources(Queue.class).inNamespace(NS).withName("kept").delete();

        await().atMost(WAIT).until(() -> get("kept") == null);
        assertTrue(brokerQueue(null, "kept").isPresent());
    }

    @Test
    void aDeleteIfEmptyQueueIsDeletedOnlyOnceItsMessagesAreConsumed() throws Exception {
        client.resource(queue("drained", QueueDeletionPolicy.DeleteIfEmpty)).create();
        awaitReady("drained");
        send("POST", "/api/v1/push", null,
                "{\"items\":[{\"queue\":\"drained\",\"payload\":{\"n\":1}},{\"queue\":\"drained\",\"payload\":{\"n\":2}}]}");

        client.resources(Queue.class).inNamespace(NS).withName("drained").delete();

        await().atMost(WAIT).until(() -> readyCondition("drained").map(c -> "NotEmpty".equals(c.getReason())).orElse(false));
        assertTrue(brokerQueue(null, "drained").isPresent());

        HttpResponse<String> popped = send("GET", "/api/v1/pop/queue/drained?batch=10&autoAck=true", null, null);
        assertEquals(200, popped.statusCode(), popped.body());

        await().atMost(WAIT).until(() -> get("drained") == null);
        assertTrue(brokerQueue(null, "drained").isEmpty());
    }

    @Test
    void aQueueDeletedOnTheBrokerIsRestoredByTheResync() throws Exception {
        Queue queue = queue("restored", QueueDeletionPolicy.Retain);
        queue.getSpec().setOptions(new QueueOptions().withTtl(99));
        client.resource(queue).create();
        awaitReady("restored");

        HttpResponse<String> deleted = send("DELETE", "/api/v1/resources/queues/restored", null, null);
        assertEquals(200, deleted.statusCode(), deleted.body());
        assertTrue(brokerQueue(null, "restored").isEmpty());

        await().atMost(WAIT).until(() -> brokerQueue(null, "restored").isPresent());
        assertEquals(99, brokerQueue(null, "restored").orElseThrow().path("options").path("ttl").asInt());
    }

    @Test
    void anOptionTheBrokerRefusesIsAPermanentNotReadyWithItsMessage() {
        Queue queue = queue("refused", QueueDeletionPolicy.Retain);
        // The CRD's schema would refuse this at kubectl apply; the mock API server does not validate.
        queue.getSpec().setOptions(new QueueOptions().withRetentionSinkHoldMaxSeconds(10));
        client.resource(queue).create();

        await().atMost(WAIT).until(() -> readyCondition("refused").map(c -> "ConfigureRejected".equals(c.getReason())).orElse(false));
        assertTrue(readyCondition("refused").orElseThrow().getMessage().contains("retentionSinkHoldMaxSeconds"),
                readyCondition("refused").orElseThrow().getMessage());
    }

    @Test
    void aPurgedTenantLosesAllItsQueuesBeforeItsResourceGoes() throws Exception {
        Tenant tenant = new Tenant();
        tenant.getMetadata().setName("team-a");
        tenant.getMetadata().setNamespace(NS);
        TenantSpec spec = new TenantSpec();
        spec.setDeletionPolicy(TenantDeletionPolicy.Purge);
        tenant.setSpec(spec);
        client.resource(tenant).create();
        String tenantId = TenantIds.derived(NS, "team-a");
        for (String name : new String[] {"t1", "t2", "t3"}) {
            Queue queue = queue(name, QueueDeletionPolicy.Retain);
            queue.getSpec().setTenantRef(new TenantReference("team-a"));
            client.resource(queue).create();
            awaitReady(name);
            assertTrue(brokerQueue(tenantId, name).isPresent());
            assertTrue(brokerQueue(null, name).isEmpty(), "the queue lives under the tenant, not the default one");
        }
        send("POST", "/api/v1/push", tenantId, "{\"items\":[{\"queue\":\"t1\",\"payload\":{\"n\":1}}]}");

        client.resources(Tenant.class).inNamespace(NS).withName("team-a").delete();

        await().atMost(WAIT).until(() -> client.resources(Tenant.class).inNamespace(NS).withName("team-a").get() == null);
        for (String name : new String[] {"t1", "t2", "t3"}) {
            assertTrue(brokerQueue(tenantId, name).isEmpty(), name + " purged");
        }
    }

    private static Queue queue(String name, QueueDeletionPolicy policy) {
        return Declared.queue(NS, name, policy);
    }

    private static Queue get(String name) {
        return client.resources(Queue.class).inNamespace(NS).withName(name).get();
    }

    private static Optional<Condition> readyCondition(String name) {
        Queue q = get(name);
        return q == null || q.getStatus() == null ? Optional.empty() : Conditions.find(q.getStatus().getConditions(), Conditions.READY);
    }

    private static void awaitReady(String name) {
        await().atMost(WAIT).until(() -> readyCondition(name).map(c -> "True".equals(c.getStatus())).orElse(false));
    }

    private static Optional<JsonNode> brokerQueue(String tenant, String name) throws Exception {
        return api.queue(tenant, name);
    }

    private static HttpResponse<String> send(String method, String path, String tenant, String body) throws Exception {
        return api.send(method, path, tenant, body);
    }
}
