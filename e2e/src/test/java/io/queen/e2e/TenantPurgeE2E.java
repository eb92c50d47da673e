package io.queen.e2e;

import io.fabric8.kubernetes.api.model.Event;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A Tenant under deletionPolicy Purge takes its data on the broker with it when it is deleted. */
class TenantPurgeE2E {
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
    void deletingATenantUnderPurgeDeletesItsQueuesOnTheBroker() {
        String tenantName = "e2e-team";
        String queueName = "e2e-team-jobs";
        cluster.createTenant(tenantName, Map.of("deletionPolicy", "Purge",
                "purge", Map.of("maxQueuesPerStep", 1, "maxRowsPerStep", 100)));
        await().atMost(RECONCILED).until(() -> QueenCluster.readyForItsGeneration(cluster.tenant(tenantName).get()));
        String tenantId = (String) QueenCluster.status(cluster.tenant(tenantName).get()).get("tenantId");

        // Retain: the queue outlives its resource, so only the tenant purge can remove it.
        cluster.createQueue(queueName, Map.of("deletionPolicy", "Retain", "tenantRef", Map.of("name", tenantName)));
        await().atMost(RECONCILED).until(() -> QueenCluster.readyForItsGeneration(cluster.queue(queueName).get()));
        assertEquals(tenantId, QueenCluster.status(cluster.queue(queueName).get()).get("tenantId"));
        assertEquals(List.of("queued", "queued", "queued"), cluster.broker.push(tenantId, queueName, List.of("a", "b", "c")));
        assertTrue(cluster.broker.queue(tenantId, queueName).isPresent(), "visible under its tenant");
        assertTrue(cluster.broker.queue(null, queueName).isEmpty(), "invisible to the default tenant");
        cluster.queue(queueName).delete();
        await().atMost(RECONCILED).until(() -> cluster.queue(queueName).get() == null);
        assertTrue(cluster.broker.queue(tenantId, queueName).isPresent(), "Retain left the queue");

        cluster.tenant(tenantName).delete();
        await().atMost(RECONCILED).until(() -> cluster.tenant(tenantName).get() == null);
        assertTrue(cluster.broker.queue(tenantId, queueName).isEmpty(), "purged with its tenant");
        List<Event> events = cluster.client.v1().events().inNamespace(cluster.settings.namespace()).list().getItems();
        assertTrue(events.stream().anyMatch(e -> tenantName.equals(e.getInvolvedObject().getName())
                && "Purged".equals(e.getReason())), "a Purged event on the Tenant");
    }
}
