package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.QueenOperator;
import io.queen.operator.support.FakeClusterControllers;
import io.queen.operator.support.MutableClock;
import io.queen.operator.support.OperatorHarness;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rollout controller wired into the running operator (informers on StatefulSets, Pods and
 * Jobs) against the fabric8 mock API server, with the test thread playing the cluster's controllers.
 */
@EnableKubernetesMockClient(crud = true)
class BrokerRolloutReconcilerTest {
    private static final String NS = "queen";

    static KubernetesClient client;

    @Test
    void theRunningOperatorRollsANewImageThroughTheSchemaJobOnePodAtATime() throws Exception {
        OperatorHarness.installCrds(client);
        MutableClock clock = new MutableClock(Instant.now());
        FakeClusterControllers cluster = new FakeClusterControllers(client, NS, "broker", clock);
        client.apps().statefulSets().inNamespace(NS).resource(new StatefulSetBuilder()
                .withNewMetadata().withName("broker").withNamespace(NS)
                    .addToLabels("app.kubernetes.io/part-of", "queen").addToLabels("app.kubernetes.io/component", "broker")
                .endMetadata()
                .withNewSpec().withReplicas(3).withNewUpdateStrategy().withType("OnDelete").endUpdateStrategy()
                    .withNewSelector().addToMatchLabels("app", "queen-broker").endSelector()
                    .withNewTemplate().withNewMetadata().addToLabels("app", "queen-broker").endMetadata()
                        .withNewSpec().addNewContainer().withName("broker").withImage("queen-broker:1").endContainer().endSpec()
                    .endTemplate()
                .endSpec().build()).create();
        List<String> deletionOrder = new CopyOnWriteArrayList<>();
        AtomicInteger mostDown = new AtomicInteger();
        AtomicReference<List<String>> previous = new AtomicReference<>(List.of());
        AtomicReference<RuntimeException> failed = new AtomicReference<>();
        // The cluster's controllers act on their own, every 300 ms (one at a time: fixed delay).
        ScheduledExecutorService controllers = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "fake-cluster"));

        try (QueenOperator operator = OperatorHarness.start(client, URI.create("http://127.0.0.1:1"),
                OperatorHarness.fastTimings(Duration.ofMinutes(5), Duration.ofMinutes(10)), true, clock)) {
            controllers.scheduleWithFixedDelay(() -> {
                try {
                    cluster.tick();
                    List<String> names = client.pods().inNamespace(NS).list().getItems().stream().map(p -> p.getMetadata().getName()
                            + "@" + p.getSpec().getContainers().get(0).getImage()).toList();
                    previous.get().stream().filter(n -> !names.contains(n) && !n.endsWith(":2"))
                            .forEach(n -> deletionOrder.add(n.substring(0, n.indexOf('@'))));
                    previous.set(names);
                    mostDown.accumulateAndGet(down(), Math::max);
                } catch (RuntimeException e) {
                    // A scheduled task that throws is not run again: keep the cause for the test's failure.
                    failed.compareAndSet(null, e);
                    throw e;
                }
            }, 0, 300, TimeUnit.MILLISECONDS);
            // First install: the schema Job runs for image 1 before anything else.
            await().atMost(Duration.ofSeconds(60)).until(() -> "queen-broker:1".equals(annotation(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION)));
            await().atMost(Duration.ofSeconds(60)).until(() -> down() == 0 && client.pods().inNamespace(NS).list().getItems().size() == 3);
            mostDown.set(0);
            deletionOrder.clear();

            client.apps().statefulSets().inNamespace(NS).withName("broker").edit(s -> {
                s.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("queen-broker:2");
                return s;
            });

            await().atMost(Duration.ofSeconds(90)).until(() -> client.pods().inNamespace(NS).list().getItems().stream()
                    .filter(p -> "queen-broker:2".equals(p.getSpec().getContainers().get(0).getImage())).count() == 3 && down() == 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> String.valueOf(annotation(RolloutAnnotations.STATE_ANNOTATION)).startsWith("complete"));
        } finally {
            controllers.shutdown();
            controllers.awaitTermination(30, TimeUnit.SECONDS);
            if (failed.get() != null) {
                // The cause of whatever timed out above: the cluster stopped acting.
                throw new AssertionError("the fake controllers failed", failed.get());
            }
        }
        assertEquals("queen-broker:2", annotation(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION));
        assertEquals(List.of("broker-2", "broker-1", "broker-0"), deletionOrder);
        assertTrue(mostDown.get() <= 1, "never two brokers down, saw " + mostDown.get());
    }

    private static String annotation(String key) {
        var sts = client.apps().statefulSets().inNamespace(NS).withName("broker").get();
        return sts.getMetadata().getAnnotations() == null ? null : sts.getMetadata().getAnnotations().get(key);
    }

    private static int down() {
        int down = 3;
        for (Pod p : client.pods().inNamespace(NS).list().getItems()) {
            if (p.getStatus() != null && p.getStatus().getConditions() != null && p.getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
                down--;
            }
        }
        return Math.max(down, 0);
    }
}
