package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.EventRecorder;
import io.queen.operator.support.FakeClusterControllers;
import io.queen.operator.support.MutableClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The executor against the fabric8 mock API server in CRUD mode, with the test playing the
 * StatefulSet controller, the kubelet and the Job controller ({@link FakeClusterControllers}).
 */
@EnableKubernetesMockClient(crud = true)
class RolloutExecutorTest {
    private static final String NS = "queen";
    private static final String STS = "broker";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    static KubernetesClient client;

    private MutableClock clock;
    private FakeClusterControllers cluster;
    private final List<String> log = new ArrayList<>();
    private int mostBrokersDown;

    @BeforeEach
    void threeReadyBrokersOnV1() {
        client.apps().statefulSets().inNamespace(NS).delete();
        client.pods().inNamespace(NS).delete();
        client.batch().v1().jobs().inNamespace(NS).delete();
        client.v1().events().inNamespace(NS).delete();
        clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        cluster = new FakeClusterControllers(client, NS, STS, clock);
        client.apps().statefulSets().inNamespace(NS).resource(new StatefulSetBuilder()
                .withNewMetadata().withName(STS).withNamespace(NS)
                    .addToLabels("app.kubernetes.io/part-of", "queen").addToLabels("app.kubernetes.io/component", "broker")
                    .addToAnnotations(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, "queen-broker:1")
                    .addToAnnotations(SchemaJobs.OWNER_SECRET_ANNOTATION, "queen-db-owner")
                .endMetadata()
                .withNewSpec().withReplicas(3).withNewUpdateStrategy().withType("OnDelete").endUpdateStrategy()
                    .withNewSelector().addToMatchLabels("app", "queen-broker").endSelector()
                    .withNewTemplate().withNewMetadata().addToLabels("app", "queen-broker").endMetadata()
                        .withNewSpec().addNewContainer().withName("broker").withImage("queen-broker:1")
                            .addNewEnv().withName("PG_USER").withValue("queen_app").endEnv()
                            .addNewEnv().withName("QUEEN_APPLY_SCHEMA").withValue("0").endEnv()
                        .endContainer().endSpec()
                    .endTemplate()
                .endSpec().build()).create();
        for (int i = 0; i < 3; i++) {
            cluster.tick();
        }
        assertEquals(0, brokersDown());
    }

    @Test
    void aNewImageRunsTheSchemaJobFirstThenReplacesOnePodAtATimeHighestOrdinalFirst() {
        RolloutExecutor executor = executor();
        setImage("queen-broker:2");

        roll(executor, 40);

        assertEquals(List.of("job", "delete broker-2", "delete broker-1", "delete broker-0", "complete"), actions());
        assertEquals(1, mostBrokersDown, "never two brokers down");
        assertTrue(pods().stream().allMatch(p -> "queen-broker:2".equals(p.getSpec().getContainers().get(0).getImage())));
        StatefulSet sts = sts();
        assertEquals("queen-broker:2", sts.getMetadata().getAnnotations().get(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION));
        assertTrue(sts.getMetadata().getAnnotations().get(RolloutAnnotations.STATE_ANNOTATION).startsWith("complete "));
        assertTrue(eventReasons().containsAll(List.of("SchemaJobStarted", "SchemaApplied", "PodRestarted", "RolloutComplete")));
    }

    @Test
    void theSchemaJobRunsTheNewImageWithOwnerCredentialsAndWithoutTheBrokersDatabaseUser() {
        setImage("queen-broker:2");
        executor().reconcile(NS, STS);

        var job = client.batch().v1().jobs().inNamespace(NS).list().getItems().get(0);
        var container = job.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertEquals("queen-broker:2", container.getImage());
        assertEquals(List.of("apply-schema"), container.getArgs());
        // The broker's own PG_USER (a plain value) is gone; the Job's comes from the owner Secret.
        var user = container.getEnv().stream().filter(e -> e.getName().equals("PG_USER")).toList();
        assertEquals(1, user.size());
        assertEquals("queen-db-owner", user.getFirst().getValueFrom().getSecretKeyRef().getName());
        assertTrue(container.getEnv().stream().anyMatch(e -> e.getName().equals("QUEEN_APPLY_SCHEMA") && e.getValue().equals("1")));
        assertEquals(STS, job.getMetadata().getOwnerReferences().get(0).getName());
    }

    @Test
    void aFailedSchemaJobBlocksTheRollWithAWarningAndTouchesNoPod() {
        cluster.failJobs();
        setImage("queen-broker:2");

        roll(executor(), 10);

        assertEquals(List.of("job"), actions());
        assertEquals(0, mostBrokersDown);
        assertTrue(sts().getMetadata().getAnnotations().get(RolloutAnnotations.STATE_ANNOTATION).startsWith("blocked-schema"));
        assertEquals(1, eventReasons().stream().filter("SchemaJobFailed"::equals).count(), "one warning, not one per round");
    }

    @Test
    void aPodThatDoesNotBecomeReadyInTimeHaltsTheRoll() {
        cluster.breakImage("queen-broker:2");
        setImage("queen-broker:2");

        roll(executor(), 60);

        assertEquals(List.of("job", "delete broker-2"), actions());
        assertTrue(log.get(log.size() - 1).startsWith("Halt"), log.toString());
        assertEquals(1, mostBrokersDown);
        assertEquals("stalled broker-2", sts().getMetadata().getAnnotations().get(RolloutAnnotations.STATE_ANNOTATION));
        assertEquals(1, eventReasons().stream().filter("RolloutStalled"::equals).count());
    }

    @Test
    void aRestartedOperatorResumesTheRollWithoutTouchingTwoPods() {
        setImage("queen-broker:2");
        RolloutExecutor first = executor();
        while (!actions().contains("delete broker-2")) {
            step(first);
        }
        // The operator restarts right after deleting broker-2: nothing of it survives but the cluster.
        RolloutExecutor second = executor();

        roll(second, 40);

        assertEquals(List.of("job", "delete broker-2", "delete broker-1", "delete broker-0", "complete"), actions());
        assertEquals(1, mostBrokersDown);
    }

    @Test
    void aRestartAnnotationReplacesEveryBrokerWithoutASchemaJob() {
        client.apps().statefulSets().inNamespace(NS).withName(STS).edit(s -> {
            s.getMetadata().getAnnotations().put(RolloutAnnotations.RESTART_ANNOTATION, "2026-01-01T00:00:00Z");
            return s;
        });

        roll(executor(), 40);

        assertEquals(List.of("restart", "delete broker-2", "delete broker-1", "delete broker-0", "complete"), actions());
        assertEquals(1, mostBrokersDown);
        assertFalse(client.batch().v1().jobs().inNamespace(NS).list().getItems().iterator().hasNext());
    }

    @Test
    void aTemplateTheStatefulSetControllerHasNotObservedYetIsWaitedFor() {
        // The new template is in, its schema recorded, but the controller has not caught up: the old
        // updateRevision would make every pod look current.
        client.apps().statefulSets().inNamespace(NS).withName(STS).edit(s -> {
            s.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("queen-broker:2");
            s.getMetadata().getAnnotations().put(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, "queen-broker:2");
            return s;
        });
        StatefulSet stale = sts();
        assertNotNull(stale.getMetadata().getGeneration(), "the API server counts generations");
        stale.getStatus().setObservedGeneration(stale.getMetadata().getGeneration() - 1);
        client.apps().statefulSets().inNamespace(NS).resource(stale).updateStatus();

        RolloutStep step = executor().reconcile(NS, STS).orElseThrow();

        assertTrue(step instanceof RolloutStep.Wait, step.toString());
        assertFalse(String.valueOf(sts().getMetadata().getAnnotations().get(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
    }

    private RolloutExecutor executor() {
        return new RolloutExecutor(new RolloutObserver(client, clock),
                new RolloutActions(client, new EventRecorder(client, clock), clock, false), READY_TIMEOUT);
    }

    /** Rounds of: the operator acts, the cluster's controllers act, a second passes. */
    private void roll(RolloutExecutor executor, int rounds) {
        for (int i = 0; i < rounds; i++) {
            RolloutStep step = step(executor);
            if (step instanceof RolloutStep.Complete && actions().size() > 1) {
                return;
            }
        }
    }

    private RolloutStep step(RolloutExecutor executor) {
        RolloutStep step = executor.reconcile(NS, STS).orElseThrow();
        log.add(step.toString());
        mostBrokersDown = Math.max(mostBrokersDown, brokersDown());
        cluster.tick();
        clock.advance(Duration.ofSeconds(1));
        return step;
    }

    private List<String> actions() {
        List<String> actions = new ArrayList<>();
        for (String entry : log) {
            if (entry.startsWith("RunSchemaJob")) {
                actions.add("job");
            } else if (entry.startsWith("RequestRestart")) {
                actions.add("restart");
            } else if (entry.startsWith("DeletePod")) {
                actions.add("delete " + entry.substring(entry.indexOf("pod=") + 4, entry.indexOf(',')));
            } else if (entry.startsWith("Complete") && !actions.isEmpty() && !actions.get(actions.size() - 1).equals("complete")) {
                actions.add("complete");
            }
        }
        return actions;
    }

    private int brokersDown() {
        Map<String, Boolean> ready = new java.util.HashMap<>();
        for (Pod p : pods()) {
            ready.put(p.getMetadata().getName(), p.getStatus() != null && p.getStatus().getConditions() != null
                    && p.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())));
        }
        int down = 0;
        for (int i = 0; i < 3; i++) {
            if (!ready.getOrDefault(STS + "-" + i, false)) {
                down++;
            }
        }
        return down;
    }

    private void setImage(String image) {
        client.apps().statefulSets().inNamespace(NS).withName(STS).edit(s -> {
            s.getSpec().getTemplate().getSpec().getContainers().get(0).setImage(image);
            return s;
        });
        cluster.tick();
    }

    private StatefulSet sts() {
        return client.apps().statefulSets().inNamespace(NS).withName(STS).get();
    }

    private List<Pod> pods() {
        return client.pods().inNamespace(NS).list().getItems();
    }

    private List<String> eventReasons() {
        return client.v1().events().inNamespace(NS).list().getItems().stream().map(Event::getReason).toList();
    }
}
