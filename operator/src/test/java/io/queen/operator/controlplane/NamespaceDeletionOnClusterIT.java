package io.queen.operator.controlplane;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Declared;
import io.queen.operator.support.RealBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Deleting namespaces never leaves anything in Terminating: a namespace of Queues and Tenants
 * while the operator runs (the real namespace controller deletes them, the operator does what
 * their policies ask), and, after {@code helm uninstall} (no operator any more), the release's own
 * namespace with its brokers and its retained Queues and Tenants.
 */
@ExtendWith(RealControlPlane.class)
class NamespaceDeletionOnClusterIT {
    private static final Duration GONE = Duration.ofSeconds(90);

    private static ControlPlane plane;
    private static KubernetesClient admin;
    private static RealBroker broker;
    private static BrokerApi api;

    @BeforeAll
    static void start(ControlPlane controlPlane) {
        plane = controlPlane;
        admin = plane.adminClient("default");
        broker = RealBroker.start("cluster_namespaces");
        api = new BrokerApi(broker.url());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    void aNamespaceOfQueuesAndTenantsIsDeletedWhileTheOperatorRuns() throws Exception {
        ChartRelease release = ChartRelease.render(plane, "queen-ns-a", "broker:\n  replicas: 1\n");
        release.install(admin);
        try (OperatorOnCluster ignored = OperatorOnCluster.start(plane, release, broker.url(), Map.of("ROLLOUT_ENABLED", "false"))) {
            String ns = "apps-doomed";
            namespace(ns);
            admin.resource(Declared.queue(ns, "doomed-kept", QueueDeletionPolicy.Retain)).create();
            admin.resource(Declared.queue(ns, "doomed-deleted", QueueDeletionPolicy.Delete)).create();
            admin.resource(Declared.tenant(ns, "doomed-tenant", TenantDeletionPolicy.Purge)).create();
            await().atMost(GONE).until(() -> ready(ns, "doomed-kept") && ready(ns, "doomed-deleted"));

            admin.namespaces().withName(ns).delete();

            await().atMost(GONE).until(() -> admin.namespaces().withName(ns).get() == null);
            assertTrue(api.queue(null, "doomed-kept").isPresent(), "Retain kept the queue on the broker");
            assertTrue(api.queue(null, "doomed-deleted").isEmpty(), "Delete removed the queue from the broker");
        }
    }

    @Test
    void afterHelmUninstallTheReleaseNamespaceDeletesWithItsBrokersAndRetainedResources() throws Exception {
        String ns = "queen-ns-b";
        ChartRelease release = ChartRelease.render(plane, ns, "broker:\n  replicas: 2\n");
        release.install(admin);
        try (FakeKubelet kubelet = new FakeKubelet(admin, ns)) {
            try (OperatorOnCluster ignored = OperatorOnCluster.start(plane, release, broker.url(), Map.of())) {
                admin.resource(Declared.queue(ns, "left-behind", QueueDeletionPolicy.Retain)).create();
                admin.resource(Declared.tenant(ns, "left-tenant", TenantDeletionPolicy.Retain)).create();
                await().atMost(GONE).until(() -> ready(ns, "left-behind"));
                await().atMost(GONE).until(() -> admin.pods().inNamespace(ns).list().getItems().size() >= 2);
            }
            // helm uninstall: the operator is gone, then the release's objects.
            release.uninstall(admin);

            admin.namespaces().withName(ns).delete();

            await().atMost(GONE).until(() -> admin.namespaces().withName(ns).get() == null);
        }
    }

    private static void namespace(String name) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    }



    private static boolean ready(String ns, String name) {
        Queue q = admin.resources(Queue.class).inNamespace(ns).withName(name).get();
        return q != null && q.getStatus() != null && Conditions.isTrue(q.getStatus().getConditions(), Conditions.READY);
    }
}
