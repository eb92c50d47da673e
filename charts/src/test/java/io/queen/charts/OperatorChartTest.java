package io.queen.charts;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The operator Deployment: how it finds the broker, what it watches, its probes and its metrics. */
class OperatorChartTest {
    /** Every variable OperatorSettings.from reads; a name outside this set would be silently ignored. */
    private static final Set<String> OPERATOR_SETTINGS = Set.of("QUEEN_BROKER_URL", "QUEEN_BROKER_TIMEOUT",
            "WATCH_NAMESPACES", "USE_SSA", "LEADER_ELECTION", "LEADER_ELECTION_LEASE_NAME", "LEADER_ELECTION_NAMESPACE",
            "OPERATOR_HTTP_PORT", "RECHECK_INTERVAL", "PURGE_STEP_INTERVAL", "BROKER_GIVE_UP_AFTER", "RESYNC_INTERVAL",
            "ROLLOUT_ENABLED", "ROLL_READY_TIMEOUT", "ROLL_POLL_INTERVAL", "ROLLOUT_NAMESPACE", "ROLLOUT_EVICT_PODS",
            "LEADER_ELECTION_IDENTITY", "QUEEN_OPERATOR_TOKEN_FILE", "QUEEN_OPERATOR_TOKEN", "QUEEN_OPERATOR_JWT_SECRET",
            "QUEEN_OPERATOR_JWT_ALGORITHM", "QUEEN_OPERATOR_JWT_ISSUER", "QUEEN_OPERATOR_JWT_AUDIENCE",
            "QUEEN_OPERATOR_JWT_ROLES_CLAIM", "QUEEN_OPERATOR_JWT_ROLE", "QUEEN_OPERATOR_TOKEN_LIFETIME",
            "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS", "QUEEN_BROKER_CA_FILE");

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void operatorCallsTheBrokerServiceOfItsRelease(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Service service = chart.one(Service.class, chart.brokerStatefulSet().getMetadata().getName());
        // https exactly when the brokers serve TLS (values: tls).
        boolean tls = AuthChartTest.broker(chart).getEnv().stream().anyMatch(v -> v.getName().equals("QUEEN_TLS_CERT_FILE"));
        String expected = (tls ? "https://" : "http://") + service.getMetadata().getName() + "." + RenderedChart.NAMESPACE + ".svc:"
                + service.getSpec().getPorts().get(0).getPort();
        assertEquals(expected, env(operator(chart), "QUEEN_BROKER_URL"));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void operatorEnvironmentUsesOnlyNamesTheOperatorReads(ValueSet valueSet) {
        Container operator = operator(RenderedChart.of(valueSet));
        Set<String> unknown = operator.getEnv().stream().map(EnvVar::getName)
                .filter(name -> !OPERATOR_SETTINGS.contains(name)).collect(Collectors.toCollection(TreeSet::new));
        assertTrue(unknown.isEmpty(), "not read by OperatorSettings: " + unknown);
        assertTrue(operator.getEnvFrom() == null || operator.getEnvFrom().isEmpty(), "the operator mounts no Secret");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void brokerRolloutsAreConfinedToTheReleaseNamespace(ValueSet valueSet) {
        assertEquals(RenderedChart.NAMESPACE, env(operator(RenderedChart.of(valueSet)), "ROLLOUT_NAMESPACE"));
    }

    @Test
    void clusterScopeWatchesEveryNamespace() {
        assertEquals("", env(operator(RenderedChart.of(ValueSet.DEFAULTS)), "WATCH_NAMESPACES"));
    }

    @Test
    void namespacesScopeWatchesTheReleaseNamespaceAndTheListedOnes() {
        String watched = env(operator(RenderedChart.of(ValueSet.NAMESPACED_RBAC)), "WATCH_NAMESPACES");
        assertEquals(Set.of(RenderedChart.NAMESPACE, "team-a", "team-b"), Set.copyOf(Arrays.asList(watched.split(","))));
        assertEquals(RenderedChart.NAMESPACE, env(operator(RenderedChart.of(ValueSet.KIND_E2E)), "WATCH_NAMESPACES"));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void probesAndMetricsUseTheOperatorsHttpPort(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Container operator = operator(chart);
        int port = Integer.parseInt(env(operator, "OPERATOR_HTTP_PORT"));
        assertEquals(port, operator.getPorts().stream().filter(p -> "http-metrics".equals(p.getName())).findFirst()
                .orElseThrow().getContainerPort());
        assertEquals("/healthz", operator.getLivenessProbe().getHttpGet().getPath());
        assertEquals("/readyz", operator.getReadinessProbe().getHttpGet().getPath());
        Service metrics = chart.one(Service.class, chart.operatorDeployment().getMetadata().getName() + "-metrics");
        assertEquals("http-metrics", metrics.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        Map<String, String> podLabels = chart.operatorDeployment().getSpec().getTemplate().getMetadata().getLabels();
        assertTrue(podLabels.entrySet().containsAll(metrics.getSpec().getSelector().entrySet()));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void serviceMonitorsAreRenderedOnlyWhenEnabled(ValueSet valueSet) {
        List<GenericKubernetesResource> monitors = RenderedChart.of(valueSet).all(GenericKubernetesResource.class).stream()
                .filter(r -> "ServiceMonitor".equals(r.getKind())).toList();
        if (valueSet != ValueSet.SERVICE_MONITOR && valueSet != ValueSet.TLS_CERT_MANAGER) {
            assertTrue(monitors.isEmpty(), valueSet + " renders ServiceMonitors");
            return;
        }
        Map<String, String> paths = monitors.stream().collect(Collectors.toMap(m -> m.getMetadata().getName(),
                m -> String.valueOf(((Map<?, ?>) ((List<?>) ((Map<?, ?>) m.getAdditionalProperties().get("spec"))
                        .get("endpoints")).get(0)).get("path"))));
        assertEquals(Map.of("queen-broker", "/metrics/prometheus", "queen-operator", "/metrics"), paths);
        monitors.forEach(m -> assertEquals("monitoring.coreos.com/v1", m.getApiVersion()));
    }

    @Test
    void withoutLeaderElectionTheOperatorIsRecreatedAndGetsNoLeaseAccess() throws java.io.IOException {
        RenderedChart chart = RenderedChart.withValues("operator:\n  leaderElection: false\n");
        Deployment deployment = chart.operatorDeployment();
        assertEquals("false", env(operator(chart), "LEADER_ELECTION"));
        assertEquals("Recreate", deployment.getSpec().getStrategy().getType(), "two operators must never overlap");
        assertTrue(chart.all(io.fabric8.kubernetes.api.model.rbac.Role.class).stream()
                .flatMap(role -> role.getRules().stream())
                .noneMatch(rule -> rule.getResources().contains("leases")), "no Lease rule without leader election");
    }

    static Container operator(RenderedChart chart) {
        return chart.operatorDeployment().getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    static String env(Container container, String name) {
        return container.getEnv().stream().filter(e -> name.equals(e.getName())).map(EnvVar::getValue).findFirst()
                .orElseThrow(() -> new AssertionError(name + " is not set on the operator"));
    }
}
