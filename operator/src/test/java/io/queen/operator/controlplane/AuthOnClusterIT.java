package io.queen.operator.controlplane;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Declared;
import io.queen.operator.support.RealBroker;
import io.queen.operator.support.TestTokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The chart with {@code auth.enabled=true} on the real API server: the brokers' key is the Secret the
 * chart generated, the operator signs its admin tokens with the key the chart hands it (its
 * Deployment's Secret reference, resolved as the kubelet would), a wrong token is a condition on the
 * Queue, and {@code helm upgrade} keeps the generated key.
 */
@ExtendWith(RealControlPlane.class)
class AuthOnClusterIT {
    private static final String RELEASE_NS = "queen-auth";
    private static final String NS = "apps-auth";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static ControlPlane plane;
    private static KubernetesClient admin;
    private static ChartRelease release;
    private static RealBroker broker;
    private static String brokerSecret;

    @BeforeAll
    static void start(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        admin = plane.adminClient(NS);
        // helm-java's template cannot look the key up (no cluster): each render makes one, installed once here.
        release = ChartRelease.render(plane, RELEASE_NS,
                "broker:\n  replicas: 1\nauth:\n  enabled: true\n  lookupGeneratedSecret: false\n");
        release.install(admin);
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
        // The broker with the JWT environment of the chart's StatefulSet and the key of the Secret it names.
        SecretKeySelector key = brokerEnv("JWT_SECRET").getValueFrom().getSecretKeyRef();
        brokerSecret = release.secretValue(key.getName(), key.getKey());
        assertEquals("true", brokerEnv("JWT_ENABLED").getValue());
        broker = RealBroker.start("cluster_auth", Map.of("JWT_ENABLED", "true",
                "JWT_ALGORITHM", brokerEnv("JWT_ALGORITHM").getValue(), "JWT_SECRET", brokerSecret));
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
    void theOperatorAuthenticatesWithTheKeyTheChartGaveIt() throws Exception {
        BrokerApi api = new BrokerApi(broker.url(), TestTokens.hs256(brokerSecret, "admin"));
        try (OperatorOnCluster operator = OperatorOnCluster.start(plane, release, broker.url(), Map.of("ROLLOUT_ENABLED", "false"))) {
            assertNotNull(operator.settings().credentials().signing(), "the chart makes the operator sign its own tokens");
            admin.resource(Declared.queue(NS, "orders", QueueDeletionPolicy.Delete)).create();

            await().atMost(WAIT).until(() -> ready("orders").map(c -> "True".equals(c.getStatus())).orElse(false));
            assertTrue(api.queue(null, "orders").isPresent());

            admin.resources(Queue.class).inNamespace(NS).withName("orders").delete();
            // Deleting a queue needs the admin role.
            await().atMost(WAIT).until(() -> get("orders") == null);
            assertTrue(api.queue(null, "orders").isEmpty());
        }
    }

    @Test
    void aWrongTokenIsAConditionOnTheQueueUntilTheTokenFileIsFixed() throws Exception {
        Path file = Files.createTempFile("operator-token-", "");
        try {
            Files.writeString(file, TestTokens.hs256("a-key-that-is-not-the-brokers-0123456789", "admin"));
            try (OperatorOnCluster operator = OperatorOnCluster.start(plane, release, broker.url(), Map.of(
                    "ROLLOUT_ENABLED", "false", "QUEEN_OPERATOR_JWT_SECRET", "",
                    "QUEEN_OPERATOR_TOKEN_FILE", file.toString()))) {
                admin.resource(Declared.queue(NS, "refused", QueueDeletionPolicy.Retain)).create();

                await().atMost(WAIT).until(() -> ready("refused").map(c -> "BrokerUnauthorized".equals(c.getReason())).orElse(false));
                Condition refused = ready("refused").orElseThrow();
                assertEquals("False", refused.getStatus());
                assertTrue(refused.getMessage().contains("401 Invalid token signature"), refused.getMessage());
                assertTrue(admin.v1().events().inNamespace(NS).list().getItems().stream()
                        .anyMatch(e -> "BrokerUnauthorized".equals(e.getReason()) && "refused".equals(e.getInvolvedObject().getName())),
                        "a Warning Event says it too");

                Files.writeString(file, TestTokens.hs256(brokerSecret, "admin"));

                await().atMost(WAIT).until(() -> ready("refused").map(c -> "True".equals(c.getStatus())).orElse(false));
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void helmUpgradeKeepsTheGeneratedKey() throws Exception {
        String namespace = "queen-auth-upgrade";
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                .serverSideApply();
        Path chart = Path.of(System.getProperty("queen.repo.root", "..")).resolve("charts/queen").toAbsolutePath().normalize();
        Path values = Files.createTempFile("queen-values-", ".yaml");
        Path kubeconfig = plane.workDir().resolve("kubeconfig");
        try {
            // Helm's own install and upgrade against the API server: lookup sees the cluster here.
            Files.writeString(values, "broker:\n  replicas: 1\ncrds:\n  install: false\nauth:\n  enabled: true\n");
            new Helm(chart).install().withName("keep").withNamespace(namespace).withKubeConfig(kubeconfig)
                    .withValuesFile(values).call();
            String installed = secretKey(namespace);

            new Helm(chart).upgrade().withName("keep").withNamespace(namespace).withKubeConfig(kubeconfig)
                    .withValuesFile(values).call();

            assertEquals(installed, secretKey(namespace), "an upgrade must not replace the key every token was signed with");
            assertEquals(64, installed.length());
        } finally {
            Files.deleteIfExists(values);
            Helm.uninstall("keep").withNamespace(namespace).withKubeConfig(kubeconfig).call();
        }
    }

    private static String secretKey(String namespace) {
        var secret = admin.secrets().inNamespace(namespace).withName("keep-queen-broker-jwt").get();
        assertNotNull(secret, "the chart generated the key's Secret");
        return new String(java.util.Base64.getDecoder().decode(secret.getData().get("JWT_SECRET")), StandardCharsets.UTF_8);
    }

    private static EnvVar brokerEnv(String name) {
        return release.brokerStatefulSet().getSpec().getTemplate().getSpec().getContainers().getFirst().getEnv().stream()
                .filter(v -> name.equals(v.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(name + " is not in the chart's broker environment"));
    }

    private static Queue get(String name) {
        return admin.resources(Queue.class).inNamespace(NS).withName(name).get();
    }

    private static Optional<Condition> ready(String name) {
        Queue q = get(name);
        return q == null || q.getStatus() == null ? Optional.empty() : Conditions.find(q.getStatus().getConditions(), Conditions.READY);
    }
}
