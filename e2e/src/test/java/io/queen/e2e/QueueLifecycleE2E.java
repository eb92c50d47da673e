package io.queen.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Queue resource's life, read as a story: create, edit, repair after drift, and deletion under
 * each deletionPolicy, checked through the broker's own API. The chart runs the operator with a
 * 15 s resync and a 3 s recheck (e2e/values-kind.yaml).
 */
class QueueLifecycleE2E {
    private static final Duration RECONCILED = Duration.ofMinutes(2);
    private static QueenCluster cluster;

    @BeforeAll
    static void connect() {
        cluster = new QueenCluster();
    }

    @AfterAll
    static void disconnect() {
        cluster.close();
    }

    @Test
    void aQueueIsCreatedEditedAndRepairedAfterDriftOnTheBroker() {
        String name = "e2e-orders";
        cluster.createQueue(name, Map.of("deletionPolicy", "Delete",
                "options", Map.of("leaseTime", 120, "retryLimit", 5)));
        awaitReady(name);
        JsonNode created = cluster.broker.queue(null, name).orElseThrow();
        assertEquals(120, created.path("options").path("leaseTime").asInt());
        assertEquals(5, created.path("options").path("retryLimit").asInt());

        // Edit: a new generation, applied and reported.
        QueenCluster.retryingConflicts(() -> cluster.queue(name).edit(q -> {
            QueenCluster.spec(q).put("options", new HashMap<>(Map.of("leaseTime", 240, "retryLimit", 5)));
            return q;
        }));
        await().atMost(RECONCILED).untilAsserted(() -> {
            GenericKubernetesResource q = cluster.queue(name).get();
            assertEquals(2L, q.getMetadata().getGeneration());
            assertTrue(QueenCluster.readyForItsGeneration(q), "Ready for generation 2");
            assertEquals(240, leaseTime(name));
        });

        // Drift: changed, then deleted behind the operator's back; the periodic resync restores both.
        cluster.broker.configure(null, name, Map.of("leaseTime", 999));
        await().atMost(RECONCILED).untilAsserted(() -> assertEquals(240, leaseTime(name)));
        cluster.broker.deleteQueue(null, name);
        await().atMost(RECONCILED).untilAsserted(() -> assertEquals(240, leaseTime(name)));

        cluster.queue(name).delete();
        awaitGone(name);
    }

    @Test
    void deletingUnderRetainLeavesTheQueueOnTheBroker() {
        String name = "e2e-retained";
        cluster.createQueue(name, Map.of("deletionPolicy", "Retain"));
        awaitReady(name);
        cluster.queue(name).delete();
        awaitGone(name);
        assertTrue(cluster.broker.queue(null, name).isPresent(), "Retain keeps the queue and its messages");
        cluster.broker.deleteQueue(null, name);
    }

    @Test
    void deletingUnderDeleteRemovesTheQueueFromTheBroker() {
        String name = "e2e-deleted";
        cluster.createQueue(name, Map.of("deletionPolicy", "Delete"));
        awaitReady(name);
        cluster.queue(name).delete();
        awaitGone(name);
        assertTrue(cluster.broker.queue(null, name).isEmpty(), "the queue is gone from the broker");
    }

    @Test
    void deletingUnderDeleteIfEmptyWaitsForTheLastMessage() {
        String name = "e2e-delete-if-empty";
        cluster.createQueue(name, Map.of("deletionPolicy", "DeleteIfEmpty"));
        awaitReady(name);
        assertEquals(List.of("queued"), cluster.broker.push(null, name, List.of("last-message")));

        cluster.queue(name).delete();
        await().atMost(RECONCILED).untilAsserted(() -> {
            GenericKubernetesResource q = cluster.queue(name).get();
            assertTrue(q != null, "the resource waits for the queue to empty");
            assertEquals("NotEmpty", QueenCluster.condition(q, "Ready").map(c -> c.get("reason")).orElse(null));
        });
        assertTrue(cluster.broker.queue(null, name).isPresent());

        assertEquals(List.of("last-message"), cluster.broker.popAndAck(null, name, 10));
        awaitGone(name);
        assertTrue(cluster.broker.queue(null, name).isEmpty(), "deleted once empty");
    }

    private static void awaitReady(String name) {
        await().atMost(RECONCILED).until(() -> QueenCluster.readyForItsGeneration(cluster.queue(name).get()));
    }

    private static void awaitGone(String name) {
        await().atMost(RECONCILED).until(() -> cluster.queue(name).get() == null);
    }

    private static int leaseTime(String name) {
        return cluster.broker.queue(null, name).map(q -> q.path("options").path("leaseTime").asInt()).orElse(-1);
    }
}
