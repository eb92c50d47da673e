package io.queen.operator.support;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.operator.OperatorSettings;
import io.queen.operator.QueenOperator;
import io.queen.operator.brokerclient.CredentialSettings;
import io.queen.operator.reconcile.ReconcileTimings;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Stream;

/** Runs the operator in the test JVM against the fabric8 mock API server (CRUD mode). */
public final class OperatorHarness {
    private OperatorHarness() {
    }

    /** The generated CRDs, so that the mock knows the status subresource of Queue and Tenant. */
    public static void installCrds(KubernetesClient client) throws IOException {
        try (Stream<Path> files = Files.list(Path.of("target", "classes", "META-INF", "fabric8"))) {
            for (Path file : files.filter(p -> p.toString().endsWith("-v1.yml")).toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    CustomResourceDefinition crd = client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
                    client.apiextensions().v1().customResourceDefinitions().resource(crd).createOr(c -> c.update());
                }
            }
        }
    }

    /** Short waits so tests run in seconds. */
    public static ReconcileTimings fastTimings(Duration resync, Duration brokerGiveUp) {
        return new ReconcileTimings(Duration.ofMillis(500), Duration.ofMillis(100), brokerGiveUp, resync);
    }

    public static QueenOperator start(KubernetesClient client, URI brokerUrl, ReconcileTimings timings, boolean rollout,
                                      Clock clock) {
        return start(client, brokerUrl, timings, rollout, clock, CredentialSettings.NONE);
    }

    public static QueenOperator start(KubernetesClient client, URI brokerUrl, ReconcileTimings timings, boolean rollout,
                                      Clock clock, CredentialSettings credentials) {
        return start(client, brokerUrl, timings, rollout, clock, credentials, null);
    }

    /** {@code caFile}: the PEM CA an https broker's certificate is checked with (QUEEN_BROKER_CA_FILE), or null. */
    public static QueenOperator start(KubernetesClient client, URI brokerUrl, ReconcileTimings timings, boolean rollout,
                                      Clock clock, CredentialSettings credentials, Path caFile) {
        OperatorSettings settings = new OperatorSettings(brokerUrl, Duration.ofSeconds(5), Set.of(), false, false,
                "queen-operator", null, 0, timings, rollout, Duration.ofSeconds(30), Duration.ofMillis(500),
                false, null, null, credentials, caFile);
        QueenOperator operator = QueenOperator.create(client, settings, new SimpleMeterRegistry(), clock, () -> { });
        operator.start();
        return operator;
    }
}
