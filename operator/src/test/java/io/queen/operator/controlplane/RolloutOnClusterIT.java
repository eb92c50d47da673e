package io.queen.operator.controlplane;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.queen.operator.rollout.RolloutAnnotations;
import io.queen.operator.support.Conflicts;
import io.queen.operator.support.Steady;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broker rollouts through the REAL StatefulSet and Job controllers (and garbage collector): the
 * chart's StatefulSet ({@code OnDelete}, 3 replicas, its PodDisruptionBudget), the operator with the
 * chart's RBAC, and {@link FakeKubelet} as the node. Throughout, a watcher counts how many brokers
 * are down at once; it must never exceed one.
 */
@ExtendWith(RealControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RolloutOnClusterIT {
    private static final String NS = "queen-rollout";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int REPLICAS = 3;

    private static ControlPlane plane;
    private static KubernetesClient admin;
    private static ChartRelease release;
    private static FakeKubelet kubelet;
    private static OperatorOnCluster operator;
    private static String sts;
    private static final AtomicInteger MOST_DOWN = new AtomicInteger();
    private static ScheduledExecutorService downWatcher;

    @BeforeAll
    static void install(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        admin = plane.adminClient(NS);
        release = ChartRelease.render(plane, NS, "broker:\n  replicas: " + REPLICAS + "\n");
        release.install(admin);
        sts = release.brokerStatefulSet().getMetadata().getName();
        kubelet = new FakeKubelet(admin, NS);
        operator = start();
        downWatcher = Executors.newSingleThreadScheduledExecutor();
        downWatcher.scheduleWithFixedDelay(() -> {
            try {
                MOST_DOWN.accumulateAndGet(REPLICAS - readyBrokers(), Math::max);
            } catch (RuntimeException e) {
                // The next look counts.
            }
        }, 0, 50, TimeUnit.MILLISECONDS);
    }

    @AfterAll
    static void close() {
        if (downWatcher != null) {
            downWatcher.shutdownNow();
        }
        if (operator != null) {
            operator.close();
        }
        if (kubelet != null) {
            kubelet.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    private static OperatorOnCluster start() {
        // No Queue here: the broker URL points nowhere. A 5 s ready timeout makes a halt quick to see.
        return OperatorOnCluster.start(plane, release, URI.create("http://127.0.0.1:9"),
                Map.of("ROLL_READY_TIMEOUT", "5s", "LEADER_ELECTION_IDENTITY", "rollout-" + System.nanoTime()));
    }

    @Test
    @Order(1)
    void theFirstInstallAppliesTheSchemaThenSettles() {
        await().atMost(WAIT).until(() -> readyBrokers() == REPLICAS);
        String image = image(statefulSet());
        await().atMost(WAIT).until(() -> image.equals(annotation(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION)));
        await().atMost(WAIT).until(() -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
        assertTrue(schemaJobs().stream().anyMatch(j -> j.getStatus() != null && Integer.valueOf(1).equals(j.getStatus().getSucceeded())),
                "the Job controller completed the schema Job");
    }

    @Test
    @Order(2)
    void aNewImageRollsThroughTheSchemaJobThenOnePodAtATime() {
        List<String> uidsBefore = brokerPods().stream().map(p -> p.getMetadata().getUid()).toList();
        MOST_DOWN.set(0);
        setImage("queen-broker:2.0.0");

        // Until the Job controller reports the schema Job done and the operator records it, no broker is touched.
        await().atMost(WAIT).until(() -> {
            boolean applied = "queen-broker:2.0.0".equals(annotation(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION));
            if (!applied) {
                assertEquals(uidsBefore, brokerPods().stream().map(p -> p.getMetadata().getUid()).toList(),
                        "a broker was replaced before the schema Job completed");
            }
            return applied;
        });
        assertTrue(schemaJobs().stream().anyMatch(j -> j.getSpec().getTemplate().getSpec().getContainers().getFirst().getImage()
                .equals("queen-broker:2.0.0") && j.getStatus() != null && Integer.valueOf(1).equals(j.getStatus().getSucceeded())));
        await().atMost(WAIT).until(() -> rolledTo("queen-broker:2.0.0"));
        await().atMost(WAIT).until(() -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
        StatefulSet rolled = statefulSet();
        assertEquals(rolled.getMetadata().getGeneration(), rolled.getStatus().getObservedGeneration());
        assertTrue(brokerPods().stream().noneMatch(p -> uidsBefore.contains(p.getMetadata().getUid())), "every pod was replaced");
        assertTrue(brokerPods().stream().allMatch(p -> rolled.getStatus().getUpdateRevision()
                .equals(p.getMetadata().getLabels().get("controller-revision-hash"))));
        assertEquals(1, MOST_DOWN.get(), "one broker down at a time, never two");
        assertTrue(events("PodRestarted") >= REPLICAS);
    }

    @Test
    @Order(3)
    void aPodThatDoesNotBecomeReadyHaltsTheRoll() {
        MOST_DOWN.set(0);
        // The schema Job of the bad image still succeeds: the image's brokers are what never get Ready.
        kubelet.outcomes(p -> !FakeKubelet.isJobPod(p) && image(p).equals("queen-broker:3.0.0-bad")
                ? FakeKubelet.Outcome.NOT_READY : FakeKubelet.byKind(p));
        setImage("queen-broker:3.0.0-bad");

        awaitOrDescribe(WAIT, () -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("stalled"));
        // Stalled for a few more polls (the halted roll is looked at again every 3 s, and on every pod
        // change): still only the one pod on the bad image.
        Steady.holdsFor(Duration.ofSeconds(3), "the halted roll replaces no second broker", () -> assertEquals(1,
                brokerPods().stream().filter(p -> image(p).equals("queen-broker:3.0.0-bad")).count()));
        assertEquals(1, MOST_DOWN.get(), "the halted roll cost one broker");
        assertTrue(events("RolloutStalled") >= 1);
    }

    @Test
    @Order(4)
    void aFixedImageResumesAndAnOperatorRestartMidRollTakesNoSecondPodDown() {
        kubelet.outcomes(FakeKubelet::byKind);
        MOST_DOWN.set(0);
        setImage("queen-broker:3.0.1");
        // Restart the operator as soon as the roll has deleted a pod.
        await().atMost(WAIT).until(() -> annotation(RolloutAnnotations.IN_FLIGHT_ANNOTATION) != null
                && annotation(RolloutAnnotations.IN_FLIGHT_ANNOTATION).contains(statefulSet().getStatus().getUpdateRevision()));
        operator.close();
        operator = start();

        await().atMost(WAIT).until(() -> rolledTo("queen-broker:3.0.1"));
        await().atMost(WAIT).until(() -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
        assertTrue(MOST_DOWN.get() <= 1, "at most one broker down across the restart, saw " + MOST_DOWN.get());
    }

    @Test
    @Order(5)
    void aFailedSchemaJobBlocksTheRollWithAWarning() {
        kubelet.outcomes(p -> FakeKubelet.isJobPod(p) ? FakeKubelet.Outcome.FAIL : FakeKubelet.Outcome.READY);
        List<String> uidsBefore = brokerPods().stream().map(p -> p.getMetadata().getUid()).toList();
        setImage("queen-broker:4.0.0");

        // The Job controller retries the pod (backoffLimit 2, with its own backoff) before failing the Job.
        await().atMost(Duration.ofMinutes(3)).until(() -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION))
                .startsWith("blocked-schema"));
        // The Warning follows the annotation (the annotation is what makes it once): wait for it.
        await().atMost(WAIT).until(() -> events("SchemaJobFailed") >= 1);
        assertEquals(uidsBefore, brokerPods().stream().map(p -> p.getMetadata().getUid()).toList(), "no broker was touched");
    }

    /** Waits; on a timeout the failure says where the roll stands (annotations, pods, events). */
    private static void awaitOrDescribe(Duration patience, Callable<Boolean> condition) {
        try {
            await().atMost(patience).until(condition);
        } catch (ConditionTimeoutException e) {
            StringBuilder state = new StringBuilder("roll did not get there; StatefulSet annotations ")
                    .append(statefulSet().getMetadata().getAnnotations()).append(", updateRevision ")
                    .append(statefulSet().getStatus().getUpdateRevision());
            for (Pod p : brokerPods()) {
                state.append("\n  ").append(p.getMetadata().getName()).append(' ').append(image(p)).append(' ')
                        .append(p.getMetadata().getLabels().get("controller-revision-hash")).append(" ready=").append(ready(p));
            }
            admin.v1().events().inNamespace(NS).list().getItems().forEach(ev -> state.append("\n  event ")
                    .append(ev.getReason()).append(": ").append(ev.getMessage()));
            throw new AssertionError(state.toString(), e);
        }
    }

    @Test
    @Order(6)
    void anEvictionThePodDisruptionBudgetRefusesIsWaitedOut() {
        kubelet.outcomes(FakeKubelet::byKind);
        setImage("queen-broker:3.0.1");
        awaitOrDescribe(WAIT, () -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
        // Two brokers fail their probes: the budget (maxUnavailable 1) allows no disruption now.
        kubelet.markUnready(sts + "-2");
        kubelet.markUnready(sts + "-1");
        List<String> uidsBefore = brokerPods().stream().map(p -> p.getMetadata().getUid()).toList();
        setImage("queen-broker:3.0.2");

        // The unready outdated pods count as stuck after the ready timeout, and the planner would replace
        // them at once; the eviction API refuses while the budget is spent.
        awaitOrDescribe(WAIT, () -> events("EvictionRefused") >= 1);
        // Rounds go on (every 500 ms while the roll waits): each is refused, none removes a broker.
        Steady.holdsFor(Duration.ofSeconds(2), "no broker is removed while the budget is spent", () -> assertEquals(uidsBefore,
                brokerPods().stream().map(p -> p.getMetadata().getUid()).toList(), "no broker was removed"));
        assertTrue(String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("waiting-disruption-budget"));
    }

    @Test
    @Order(7)
    void theOperatorMayRollBrokersOnlyInTheReleaseNamespace() {
        Job job = new JobBuilder().withNewMetadata().withName("not-allowed")
                .withNamespace("default").endMetadata().withNewSpec().withNewTemplate().withNewSpec().withRestartPolicy("Never")
                .addNewContainer().withName("c").withImage("x").endContainer().endSpec().endTemplate().endSpec().build();
        try (KubernetesClient asOperator = plane.clientAs(NS, release.operatorServiceAccount())) {
            var refused = assertThrows(KubernetesClientException.class,
                    () -> asOperator.batch().v1().jobs().inNamespace("default").resource(job).create());
            assertEquals(403, refused.getCode(), refused.getMessage());
            assertTrue(asOperator.batch().v1().jobs().inNamespace(NS).list().getItems().size() >= 1, "allowed at home");
        }
    }

    private static boolean rolledTo(String image) {
        List<Pod> pods = brokerPods();
        return pods.size() == REPLICAS && pods.stream().allMatch(p -> image.equals(image(p)) && ready(p));
    }

    private static void setImage(String image) {
        Conflicts.retrying(() -> admin.apps().statefulSets().inNamespace(NS).withName(sts).edit(s -> {
            s.getSpec().getTemplate().getSpec().getContainers().getFirst().setImage(image);
            return s;
        }));
    }

    private static StatefulSet statefulSet() {
        return admin.apps().statefulSets().inNamespace(NS).withName(sts).get();
    }

    private static String annotation(String key) {
        Map<String, String> a = statefulSet().getMetadata().getAnnotations();
        return a == null ? null : a.get(key);
    }

    private static String image(StatefulSet s) {
        return s.getSpec().getTemplate().getSpec().getContainers().getFirst().getImage();
    }

    private static String image(Pod p) {
        return p.getSpec().getContainers().getFirst().getImage();
    }

    private static List<Pod> brokerPods() {
        List<Pod> pods = new ArrayList<>();
        for (Pod p : admin.pods().inNamespace(NS).list().getItems()) {
            if (p.getMetadata().getName().matches(Pattern.quote(sts) + "-\\d+")) {
                pods.add(p);
            }
        }
        pods.sort(Comparator.comparing(p -> p.getMetadata().getName()));
        return pods;
    }

    private static boolean ready(Pod p) {
        return p.getMetadata().getDeletionTimestamp() == null && p.getStatus() != null && p.getStatus().getConditions() != null
                && p.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static int readyBrokers() {
        return (int) brokerPods().stream().filter(RolloutOnClusterIT::ready).count();
    }

    private static List<Job> schemaJobs() {
        return admin.batch().v1().jobs().inNamespace(NS).withLabel("app.kubernetes.io/component", "schema").list().getItems();
    }

    private static long events(String reason) {
        return admin.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()) && sts.equals(e.getInvolvedObject().getName()))
                .mapToLong(e -> e.getCount() == null ? 1 : Math.max(e.getCount(), 1)).sum();
    }
}
