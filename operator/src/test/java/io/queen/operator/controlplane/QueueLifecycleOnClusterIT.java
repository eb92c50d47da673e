package io.queen.operator.controlplane;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.QueueOptions;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.crd.TenantReference;
import io.queen.operator.crd.TenantSpec;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.reconcile.TenantIds;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Conflicts;
import io.queen.operator.support.Declared;
import io.queen.operator.support.RealBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Queues and Tenants on the real API server, reconciled by the operator as the chart deploys it
 * (its RBAC, server-side apply, leader election) against the real broker on a real PostgreSQL.
 */
@ExtendWith(RealControlPlane.class)
class QueueLifecycleOnClusterIT {
    private static final String RELEASE_NS = "queen-queues";
    private static final String NS = "apps-queues";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KubernetesClient admin;
    private static RealBroker broker;
    private static BrokerApi api;
    private static OperatorOnCluster operator;

    @BeforeAll
    static void start(ControlPlane plane) throws Exception {
        admin = plane.adminClient(NS);
        ChartRelease release = ChartRelease.render(plane, RELEASE_NS, "broker:\n  replicas: 1\n");
        release.install(admin);
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
        broker = RealBroker.start("cluster_queues");
        api = new BrokerApi(broker.url());
        operator = OperatorOnCluster.start(plane, release, broker.url(), Map.of("ROLLOUT_ENABLED", "false"));
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
        if (broker != null) {
            broker.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    void aQueueIsCreatedEditedAndDeletedAndItsStatusSettlesForKubectlWait() throws Exception {
        Queue queue = queue("orders", QueueDeletionPolicy.Delete);
        queue.getSpec().setNamespace("billing");
        queue.getSpec().setOptions(new QueueOptions().withLeaseTime(120).withRetryLimit(7));
        admin.resource(queue).create();

        awaitReady("orders", 1);
        JsonNode created = api.queue(null, "orders").orElseThrow();
        assertEquals("billing", created.path("namespace").asText());
        assertEquals(120, created.path("options").path("leaseTime").asInt());
        assertTrue(get("orders").getMetadata().getFinalizers().contains("queues.queen.io/finalizer"),
                "a Delete policy needs the finalizer: " + get("orders").getMetadata().getFinalizers());

        Conflicts.retrying(() -> admin.resources(Queue.class).inNamespace(NS).withName("orders").edit(q -> {
            q.getSpec().setNamespace(null);
            q.getSpec().setOptions(new QueueOptions().withLeaseTime(30));
            return q;
        }));
        awaitReady("orders", 2);
        JsonNode edited = api.queue(null, "orders").orElseThrow();
        assertEquals(30, edited.path("options").path("leaseTime").asInt());
        assertEquals(3, edited.path("options").path("retryLimit").asInt(), "an option removed from the spec is reset");

        admin.resources(Queue.class).inNamespace(NS).withName("orders").delete();
        await().atMost(WAIT).until(() -> get("orders") == null);
        assertTrue(api.queue(null, "orders").isEmpty(), "deletionPolicy Delete deleted the queue");
    }

    @Test
    void aRetainedQueueHasNoFinalizerAndOutlivesItsResource() throws Exception {
        admin.resource(queue("kept", QueueDeletionPolicy.Retain)).create();
        awaitReady("kept", 1);
        assertTrue(get("kept").getMetadata().getFinalizers() == null || get("kept").getMetadata().getFinalizers().isEmpty(),
                "Retain needs no finalizer: " + get("kept").getMetadata().getFinalizers());

        admin.resources(Queue.class).inNamespace(NS).withName("kept").delete();
        await().atMost(WAIT).until(() -> get("kept") == null);
        assertTrue(api.queue(null, "kept").isPresent());
    }

    @Test
    void aDeleteIfEmptyQueueGoesOnlyOnceItsMessagesAreConsumed() throws Exception {
        admin.resource(queue("drained", QueueDeletionPolicy.DeleteIfEmpty)).create();
        awaitReady("drained", 1);
        api.send("POST", "/api/v1/push", null, "{\"items\":[{\"queue\":\"drained\",\"payload\":{\"n\":1}}]}");

        admin.resources(Queue.class).inNamespace(NS).withName("drained").delete();
        await().atMost(WAIT).until(() -> ready("drained").map(c -> "NotEmpty".equals(c.getReason())).orElse(false));
        assertTrue(api.queue(null, "drained").isPresent());

        assertEquals(200, api.send("GET", "/api/v1/pop/queue/drained?batch=10&autoAck=true", null, null).statusCode());
        await().atMost(WAIT).until(() -> get("drained") == null);
        assertTrue(api.queue(null, "drained").isEmpty());
    }

    @Test
    void driftOnTheBrokerIsRepairedByTheResync() throws Exception {
        Queue queue = queue("restored", QueueDeletionPolicy.Retain);
        queue.getSpec().setOptions(new QueueOptions().withTtl(99));
        admin.resource(queue).create();
        awaitReady("restored", 1);

        assertEquals(200, api.send("DELETE", "/api/v1/resources/queues/restored", null, null).statusCode());
        await().atMost(WAIT).until(() -> api.queue(null, "restored").isPresent());
        assertEquals(99, api.queue(null, "restored").orElseThrow().path("options").path("ttl").asInt());
    }

    @Test
    void aPurgedTenantLosesItsQueuesBeforeItsResourceGoes() throws Exception {
        Tenant tenant = new Tenant();
        tenant.getMetadata().setName("team-a");
        tenant.getMetadata().setNamespace(NS);
        TenantSpec spec = new TenantSpec();
        spec.setDeletionPolicy(TenantDeletionPolicy.Purge);
        tenant.setSpec(spec);
        admin.resource(tenant).create();
        String tenantId = TenantIds.derived(NS, "team-a");
        for (String name : new String[] {"t1", "t2"}) {
            Queue queue = queue(name, QueueDeletionPolicy.Retain);
            queue.getSpec().setTenantRef(new TenantReference("team-a"));
            admin.resource(queue).create();
            awaitReady(name, 1);
            assertTrue(api.queue(tenantId, name).isPresent());
        }
        admin.resources(Tenant.class).inNamespace(NS).withName("team-a").delete();

        await().atMost(WAIT).until(() -> admin.resources(Tenant.class).inNamespace(NS).withName("team-a").get() == null);
        for (String name : new String[] {"t1", "t2"}) {
            assertTrue(api.queue(tenantId, name).isEmpty(), name + " purged");
        }
    }

    @Test
    void aRefusedOrWaitingSpecStillReportsItsGenerationForKstatus() {
        // A Tenant held in Terminating by someone else's finalizer: its Queue can never become Ready.
        Tenant tenant = new Tenant();
        tenant.getMetadata().setName("held");
        tenant.getMetadata().setNamespace(NS);
        tenant.getMetadata().setFinalizers(List.of("example.com/hold"));
        tenant.setSpec(new TenantSpec());
        admin.resource(tenant).create();
        Queue orphaned = queue("orphaned", QueueDeletionPolicy.Retain);
        orphaned.getSpec().setTenantRef(new TenantReference("held"));
        admin.resource(orphaned).create();
        awaitReady("orphaned", 1);
        admin.resources(Tenant.class).inNamespace(NS).withName("held").delete();
        Queue waiting = queue("waiting", QueueDeletionPolicy.Retain);
        waiting.getSpec().setTenantRef(new TenantReference("not-there"));
        admin.resource(waiting).create();

        await().atMost(WAIT).until(() -> ready("orphaned").map(c -> "TenantDeleted".equals(c.getReason())).orElse(false));
        Queue refused = get("orphaned");
        assertEquals(1L, refused.getStatus().getObservedGeneration(), "kstatus waiters need observedGeneration when stalled");
        assertTrue(Conditions.isTrue(refused.getStatus().getConditions(), Conditions.STALLED));
        assertEquals("False", Conditions.find(refused.getStatus().getConditions(), Conditions.RECONCILING).orElseThrow().getStatus());
        Conflicts.retrying(() -> admin.resources(Tenant.class).inNamespace(NS).withName("held").edit(t -> {
            t.getMetadata().setFinalizers(List.of());
            return t;
        }));

        await().atMost(WAIT).until(() -> ready("waiting").map(c -> "TenantNotFound".equals(c.getReason())).orElse(false));
        Queue queue = get("waiting");
        assertEquals(1L, queue.getStatus().getObservedGeneration());
        assertTrue(Conditions.isTrue(queue.getStatus().getConditions(), Conditions.RECONCILING), "waiting for its Tenant");
        assertEquals("False", Conditions.find(queue.getStatus().getConditions(), Conditions.STALLED).orElseThrow().getStatus());
    }

    private static Queue queue(String name, QueueDeletionPolicy policy) {
        return Declared.queue(NS, name, policy);
    }

    private static Queue get(String name) {
        return admin.resources(Queue.class).inNamespace(NS).withName(name).get();
    }

    private static Optional<Condition> ready(String name) {
        Queue q = get(name);
        return q == null || q.getStatus() == null ? Optional.empty() : Conditions.find(q.getStatus().getConditions(), Conditions.READY);
    }

    /** What {@code kubectl wait --for=condition=Ready} waits for, at the given generation. */
    private static void awaitReady(String name, long generation) {
        await().atMost(WAIT).until(() -> {
            Queue q = get(name);
            return q != null && q.getStatus() != null && Long.valueOf(generation).equals(q.getStatus().getObservedGeneration())
                    && ready(name).map(c -> "True".equals(c.getStatus())).orElse(false);
        });
    }
}
