package io.queen.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.QueenOperator;
import io.queen.operator.crd.PurgeBudget;
import io.queen.operator.crd.QueenResources;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.QueueOptions;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.crd.TenantReference;
import io.queen.operator.support.Declared;
import io.queen.operator.brokerclient.CredentialSettings;
import io.queen.operator.support.FakeBroker;
import io.queen.operator.support.OperatorHarness;
import io.queen.operator.support.Steady;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Queue and Tenant controllers running in the test JVM against the fabric8 mock API server and
 * a scripted broker, driven through success, HTTP refusal, broker outage and each deletion policy:
 * what lands on the broker, the Ready condition and the Events.
 */
@EnableKubernetesMockClient(crud = true)
class QueueAndTenantReconcilerTest {
    private static final String NS = "apps";
    private static final Duration WAIT = Duration.ofSeconds(30);

    static KubernetesClient client;

    private FakeBroker broker;
    private QueenOperator operator;

    @BeforeAll
    static void crds() throws Exception {
        OperatorHarness.installCrds(client);
    }

    @BeforeEach
    void startBroker() throws Exception {
        broker = new FakeBroker();
    }

    @AfterEach
    void stop() {
        if (operator != null) {
            operator.close();
        }
        removeAll(Queue.class);
        removeAll(Tenant.class);
        client.v1().events().inNamespace(NS).delete();
        broker.close();
    }

    /**
     * Strips finalizers and deletes every resource of a kind, so the next test starts empty. A
     * reconciliation still finishing while the operator closes may write an object between our read
     * and our update (409 Conflict); then it is read again. A failure here used to leave "orders"
     * behind for every later test of the class.
     */
    private static <T extends HasMetadata> void removeAll(Class<T> type) {
        for (int attempt = 1; ; attempt++) {
            try {
                client.resources(type).inNamespace(NS).list().getItems().forEach(r -> {
                    r.getMetadata().setFinalizers(List.of());
                    client.resource(r).update();
                });
                break;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 20) {
                    throw e;
                }
            }
        }
        client.resources(type).inNamespace(NS).delete();
        await().atMost(WAIT).until(() -> client.resources(type).inNamespace(NS).list().getItems().isEmpty());
    }

    @Test
    void aQueueIsConfiguredOnTheBrokerAndAnEditIsApplied() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        Queue queue = queue("orders", QueueDeletionPolicy.Retain);
        queue.getSpec().setNamespace("billing");
        queue.getSpec().setOptions(new QueueOptions().withLeaseTime(120).withDedupWindowSeconds(0));
        client.resource(queue).create();

        Condition ready = awaitReady("orders", "True");
        assertEquals("Configured", ready.getReason());
        assertEquals(120, broker.queue(null, "orders").options().get("leaseTime").asInt());
        assertEquals("billing", broker.queue(null, "orders").namespace());
        Queue applied = get("orders");
        assertEquals(1L, applied.getStatus().getObservedGeneration());
        assertEquals(QueenResources.DEFAULT_TENANT_ID, applied.getStatus().getTenantId());
        assertTrue(events("orders").contains("Created"));

        client.resources(Queue.class).inNamespace(NS).withName("orders").edit(q -> {
            q.getSpec().setOptions(new QueueOptions().withLeaseTime(30));
            return q;
        });

        await().atMost(WAIT).until(() -> get("orders").getStatus().getObservedGeneration() == 2L);
        assertEquals(30, broker.queue(null, "orders").options().get("leaseTime").asInt());
        assertEquals(3600, broker.queue(null, "orders").options().get("dedupWindowSeconds").asInt(),
                "an option removed from the spec is reset to the broker's default");
        assertTrue(events("orders").contains("Configured"));
    }

    @Test
    void aQueueDeletedOnTheBrokerIsRestoredByTheResync() {
        startOperator(Duration.ofSeconds(1), Duration.ofMinutes(10));
        client.resource(queue("orders", QueueDeletionPolicy.Retain)).create();
        awaitReady("orders", "True");

        broker.dropQueue(null, "orders");

        await().atMost(WAIT).until(() -> broker.queue(null, "orders") != null);
        await().atMost(WAIT).until(() -> events("orders").contains("DriftRepaired"));
    }

    @Test
    void aBrokerRefusalIsAPermanentNotReadyWithTheBrokersTextAndNoHotLoop() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        broker.refuseSinkHold();
        Queue queue = queue("orders", QueueDeletionPolicy.Retain);
        queue.getSpec().setOptions(new QueueOptions().withRetentionSinkHold("s3"));
        client.resource(queue).create();

        Condition ready = awaitReady("orders", "False");
        assertEquals("ConfigureRejected", ready.getReason());
        assertEquals("retentionSinkHold refused by this broker", ready.getMessage());
        long configures = configureCalls();
        // Longer than JOSDK's first retry would take (2 s after a failure); the resync is 5 minutes away.
        Steady.holdsFor(Duration.ofSeconds(3), "no configure is retried after a 400", () -> assertEquals(configures,
                configureCalls(), "a 400 is not retried until the spec changes or the resync"));
        assertEquals(1, events("orders").stream().filter("ConfigureRejected"::equals).count());
    }

    @Test
    void anUnavailableBrokerIsRetriedUntilItAnswers() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        broker.failWith(503, "{\"error\":\"starting\"}");
        client.resource(queue("orders", QueueDeletionPolicy.Retain)).create();

        Condition notReady = awaitReady("orders", "False");
        assertEquals("BrokerUnavailable", notReady.getReason());
        assertTrue(notReady.getMessage().contains("503") && notReady.getMessage().contains("starting"), notReady.getMessage());

        broker.failWith(0, "");

        awaitReady("orders", "True");
        assertNotNull(broker.queue(null, "orders"));
    }

    @Test
    void aRefusedTokenIsANotReadyConditionOnAReachableBrokerUntilTheBrokerTakesIt() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        broker.failWith(401, "{\"error\":\"Invalid token signature\",\"code\":\"unauthorized\"}");
        client.resource(queue("orders", QueueDeletionPolicy.Retain)).create();

        Condition refused = awaitReady("orders", "False");
        assertEquals("BrokerUnauthorized", refused.getReason());
        assertTrue(refused.getMessage().contains("401 Invalid token signature"), refused.getMessage());
        assertEquals("True", condition("orders", Conditions.BROKER_REACHABLE).orElseThrow().getStatus(),
                "a 401 is an answer: the broker is reachable");
        assertEquals(1, events("orders").stream().filter("BrokerUnauthorized"::equals).count());

        broker.failWith(0, "");

        awaitReady("orders", "True");
    }

    @Test
    void credentialsHeldBackOverPlainHttpShowOnTheResourceAndNothingIsSent() {
        // A non-loopback plain-HTTP URL: the operator refuses before connecting, so it need not exist.
        operator = OperatorHarness.start(client, URI.create("http://queen-broker.invalid:6632"),
                OperatorHarness.fastTimings(Duration.ofMinutes(5), Duration.ofMinutes(10)), false, Clock.systemUTC(),
                new CredentialSettings(CredentialSettings.Source.TOKEN, "t.t.t", null, null, false));
        client.resource(queue("orders", QueueDeletionPolicy.Retain)).create();

        Condition refused = awaitReady("orders", "False");

        assertEquals("InsecureCredentialsRefused", refused.getReason());
        assertTrue(refused.getMessage().contains("QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS"), refused.getMessage());
        assertTrue(condition("orders", Conditions.BROKER_REACHABLE).isEmpty(), "no call was made, so nothing is known");
        assertTrue(operator.alive(), "a refusal is a condition, not a stopped operator");
    }

    @Test
    void deletionFollowsTheDeletionPolicy() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        client.resource(queue("kept", QueueDeletionPolicy.Retain)).create();
        client.resource(queue("dropped", QueueDeletionPolicy.Delete)).create();
        client.resource(queue("drained", QueueDeletionPolicy.DeleteIfEmpty)).create();
        awaitReady("kept", "True");
        awaitReady("dropped", "True");
        awaitReady("drained", "True");
        broker.putPending(null, "drained", 5);

        client.resources(Queue.class).inNamespace(NS).withName("kept").delete();
        client.resources(Queue.class).inNamespace(NS).withName("dropped").delete();
        client.resources(Queue.class).inNamespace(NS).withName("drained").delete();

        await().atMost(WAIT).until(() -> get("kept") == null && get("dropped") == null);
        assertNotNull(broker.queue(null, "kept"), "Retain leaves the queue on the broker");
        assertNull(broker.queue(null, "dropped"), "Delete removes it");
        Condition waiting = awaitReady("drained", "False");
        assertEquals("NotEmpty", waiting.getReason());
        assertNotNull(broker.queue(null, "drained"));

        broker.putPending(null, "drained", 0);

        await().atMost(WAIT).until(() -> get("drained") == null);
        assertNull(broker.queue(null, "drained"), "DeleteIfEmpty removes it once empty");
    }

    @Test
    void aBrokerGoneForLongerThanTheGiveUpTimeNoLongerHoldsTheFinalizer() {
        startOperator(Duration.ofMinutes(5), Duration.ofSeconds(2));
        client.resource(queue("orders", QueueDeletionPolicy.Delete)).create();
        awaitReady("orders", "True");
        broker.failWith(503, "{\"error\":\"gone\"}");

        client.resources(Queue.class).inNamespace(NS).withName("orders").delete();

        await().atMost(WAIT).until(() -> get("orders") == null);
        assertTrue(events("orders").contains("FinalizerRemoved"));
    }

    @Test
    void aPausedQueueIsLeftAloneAndItsDeletionKeepsTheQueue() {
        startOperator(Duration.ofSeconds(1), Duration.ofMinutes(10));
        client.resource(queue("orders", QueueDeletionPolicy.Delete)).create();
        awaitReady("orders", "True");

        client.resources(Queue.class).inNamespace(NS).withName("orders").edit(q -> {
            q.getMetadata().getAnnotations().put(QueenResources.PAUSED_ANNOTATION, "true");
            return q;
        });
        await().atMost(WAIT).until(() -> condition("orders", Conditions.PAUSED).isPresent());
        broker.dropQueue(null, "orders");
        await().pollDelay(Duration.ofSeconds(3)).atMost(WAIT).until(() -> true);
        assertNull(broker.queue(null, "orders"), "a paused queue's drift is not repaired");

        client.resources(Queue.class).inNamespace(NS).withName("orders").edit(q -> {
            q.getMetadata().getAnnotations().remove(QueenResources.PAUSED_ANNOTATION);
            return q;
        });
        await().atMost(WAIT).until(() -> broker.queue(null, "orders") != null);
        await().atMost(WAIT).until(() -> condition("orders", Conditions.PAUSED).isEmpty());
    }

    @Test
    void aQueueWaitsForItsTenantAndLivesUnderItsId() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        Queue queue = queue("orders", QueueDeletionPolicy.Retain);
        queue.getSpec().setTenantRef(new TenantReference("team-a"));
        client.resource(queue).create();

        assertEquals("TenantNotFound", awaitReady("orders", "False").getReason());

        client.resource(tenant("team-a", null, TenantDeletionPolicy.Retain)).create();

        awaitReady("orders", "True");
        String tenantId = TenantIds.derived(NS, "team-a");
        assertEquals(tenantId, get("orders").getStatus().getTenantId());
        assertNotNull(broker.queue(tenantId, "orders"));
        assertNull(broker.queue(null, "orders"), "not in the default tenant");
    }

    @Test
    void aTenantClaimingTheDefaultTenantIsRefused() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        client.resource(tenant("everyone", QueenResources.DEFAULT_TENANT_ID, TenantDeletionPolicy.Purge)).create();

        await().atMost(WAIT).until(() -> tenantCondition("everyone").filter(c -> "False".equals(c.getStatus())).isPresent());
        assertEquals("InvalidTenantId", tenantCondition("everyone").orElseThrow().getReason());
    }

    @Test
    void aPurgedTenantIsDeletedStepByStepUntilTheBrokerReportsDone() {
        startOperator(Duration.ofMinutes(5), Duration.ofMinutes(10));
        Tenant tenant = tenant("team-a", null, TenantDeletionPolicy.Purge);
        tenant.getSpec().setPurge(new PurgeBudget());
        client.resource(tenant).create();
        for (String name : List.of("q1", "q2", "q3")) {
            Queue queue = queue(name, QueueDeletionPolicy.Retain);
            queue.getSpec().setTenantRef(new TenantReference("team-a"));
            client.resource(queue).create();
            awaitReady(name, "True");
        }
        String tenantId = TenantIds.derived(NS, "team-a");

        client.resources(Tenant.class).inNamespace(NS).withName("team-a").delete();

        await().atMost(WAIT).until(() -> client.resources(Tenant.class).inNamespace(NS).withName("team-a").get() == null);
        assertNull(broker.queue(tenantId, "q1"));
        assertNull(broker.queue(tenantId, "q3"));
        assertTrue(broker.calls().stream().filter(c -> c.endsWith("/purge")).count() >= 4, "one call per step until done");
        assertTrue(eventsOf("team-a").containsAll(List.of("Purging", "Purged")));
        await().atMost(WAIT).until(() -> "TenantNotFound".equals(condition("q1", Conditions.READY).map(Condition::getReason).orElse("")));
    }

    private void startOperator(Duration resync, Duration giveUp) {
        operator = OperatorHarness.start(client, broker.url(), OperatorHarness.fastTimings(resync, giveUp), false,
                Clock.systemUTC());
    }

    private static Queue queue(String name, QueueDeletionPolicy policy) {
        Queue queue = Declared.queue(NS, name, policy);
        queue.getMetadata().setAnnotations(new java.util.HashMap<>());
        return queue;
    }

    private static Tenant tenant(String name, String id, TenantDeletionPolicy policy) {
        Tenant tenant = Declared.tenant(NS, name, policy);
        tenant.getSpec().setTenantId(id);
        return tenant;
    }

    private Queue get(String name) {
        return client.resources(Queue.class).inNamespace(NS).withName(name).get();
    }

    private Optional<Condition> condition(String queue, String type) {
        Queue q = get(queue);
        return q == null || q.getStatus() == null ? Optional.empty() : Conditions.find(q.getStatus().getConditions(), type);
    }

    private Optional<Condition> tenantCondition(String name) {
        Tenant t = client.resources(Tenant.class).inNamespace(NS).withName(name).get();
        return t == null || t.getStatus() == null ? Optional.empty() : Conditions.find(t.getStatus().getConditions(), Conditions.READY);
    }

    private Condition awaitReady(String queue, String status) {
        await().atMost(WAIT).until(() -> condition(queue, Conditions.READY).filter(c -> status.equals(c.getStatus())).isPresent());
        return condition(queue, Conditions.READY).orElseThrow();
    }

    private List<String> events(String queue) {
        return eventsOf(queue);
    }

    private List<String> eventsOf(String name) {
        return client.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName())).map(Event::getReason).toList();
    }

    private long configureCalls() {
        return broker.calls().stream().filter(c -> c.equals("POST /api/v1/configure")).count();
    }
}
