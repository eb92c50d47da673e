package io.queen.operator.controlplane;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueOptions;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantReference;
import io.queen.operator.support.Declared;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The chart's CRDs on the real API server: accepted, and refusing by themselves (OpenAPI bounds
 * and CEL rules, at {@code kubectl apply} time) what the broker or the operator would refuse later.
 * No operator runs here: every refusal is the API server's.
 */
@ExtendWith(RealControlPlane.class)
class CrdValidationOnClusterIT {
    private static final String NS = "apps-validation";
    private static KubernetesClient admin;

    @BeforeAll
    static void install(ControlPlane plane) throws Exception {
        admin = plane.adminClient(NS);
        ChartRelease.render(plane, "queen-validation", "broker:\n  replicas: 1\n").install(admin);
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
    }

    @AfterAll
    static void close() {
        if (admin != null) {
            admin.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"leaseTime", "retryLimit", "ttl", "maxSize", "retryDelay", "delayedProcessing"})
    void aNegativeOptionIsRefusedAtApply(String option) {
        QueueOptions options = switch (option) {
            case "leaseTime" -> new QueueOptions().withLeaseTime(-1);
            case "retryLimit" -> new QueueOptions().withRetryLimit(-1);
            case "ttl" -> new QueueOptions().withTtl(-1);
            case "maxSize" -> new QueueOptions().withMaxSize(-1);
            case "retryDelay" -> new QueueOptions().withRetryDelay(-1);
            default -> new QueueOptions().withDelayedProcessing(-1);
        };
        Queue queue = queue("negative-" + option.toLowerCase());
        queue.getSpec().setOptions(options);
        KubernetesClientException refused = assertThrows(KubernetesClientException.class, () -> admin.resource(queue).create());
        assertEquals(422, refused.getCode());
        assertTrue(refused.getMessage().contains(option), refused.getMessage());
    }

    @Test
    void aValidQueueIsAccepted() {
        Queue queue = queue("valid");
        queue.getSpec().setQueueName("valid-on-broker");
        queue.getSpec().setOptions(new QueueOptions().withLeaseTime(60).withRetryLimit(0).withTtl(0).withMaxSize(0));
        admin.resource(queue).create();
        assertEquals("valid-on-broker", admin.resources(Queue.class).inNamespace(NS).withName("valid").get().getSpec().getQueueName());
    }

    @Test
    void theQueueNameCannotChangeBeSetLaterOrBeRemoved() {
        Queue named = queue("named");
        named.getSpec().setQueueName("first");
        admin.resource(named).create();
        refused("named", q -> { q.getSpec().setQueueName("second"); return q; });
        refused("named", q -> { q.getSpec().setQueueName(null); return q; });

        admin.resource(queue("unnamed")).create();
        refused("unnamed", q -> { q.getSpec().setQueueName("late"); return q; });
    }

    @Test
    void theTenantReferenceCannotChangeBeSetLaterOrBeRemoved() {
        Queue referencing = queue("referencing");
        referencing.getSpec().setTenantRef(new TenantReference("team-a"));
        admin.resource(referencing).create();
        refused("referencing", q -> { q.getSpec().setTenantRef(new TenantReference("team-b")); return q; });
        refused("referencing", q -> { q.getSpec().setTenantRef(null); return q; });

        admin.resource(queue("unreferencing")).create();
        refused("unreferencing", q -> { q.getSpec().setTenantRef(new TenantReference("team-a")); return q; });
    }

    @Test
    void theTenantIdCannotChangeBeSetLaterOrBeRemoved() {
        admin.resource(tenant("with-id", "5b0f6c0e-8d7e-4a43-9f51-3d2f0c6a1b11")).create();
        refusedTenant("with-id", t -> { t.getSpec().setTenantId("6c1f7d1f-9e8f-4b54-a062-4e3f1d7b2c22"); return t; });
        refusedTenant("with-id", t -> { t.getSpec().setTenantId(null); return t; });

        admin.resource(tenant("without-id", null)).create();
        refusedTenant("without-id", t -> { t.getSpec().setTenantId("6c1f7d1f-9e8f-4b54-a062-4e3f1d7b2c22"); return t; });
    }

    private static void refused(String name, UnaryOperator<Queue> change) {
        KubernetesClientException e = assertThrows(KubernetesClientException.class,
                () -> admin.resources(Queue.class).inNamespace(NS).withName(name).edit(change));
        assertEquals(422, e.getCode(), e.getMessage());
    }

    private static void refusedTenant(String name, UnaryOperator<Tenant> change) {
        KubernetesClientException e = assertThrows(KubernetesClientException.class,
                () -> admin.resources(Tenant.class).inNamespace(NS).withName(name).edit(change));
        assertEquals(422, e.getCode(), e.getMessage());
    }

    private static Queue queue(String name) {
        return Declared.queue(NS, name, null);
    }

    private static Tenant tenant(String name, String id) {
        Tenant tenant = Declared.tenant(NS, name, null);
        tenant.getSpec().setTenantId(id);
        return tenant;
    }
}
