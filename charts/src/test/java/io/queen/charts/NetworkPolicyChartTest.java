package io.queen.charts;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The brokers' NetworkPolicy: who it admits to their port, for every value set. */
class NetworkPolicyChartTest {

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void thePolicyGuardsTheBrokersPortAndAdmitsThisReleasesOperator(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Optional<NetworkPolicy> found = policy(chart);
        if (valueSet == ValueSet.KIND_E2E) {
            assertTrue(found.isEmpty(), "the Kind suite switches it off (its client comes through a NodePort)");
            return;
        }
        NetworkPolicy policy = found.orElseThrow(() -> new AssertionError(valueSet + ": no NetworkPolicy, though on by default"));
        Map<String, String> brokerPods = chart.brokerStatefulSet().getSpec().getTemplate().getMetadata().getLabels();
        assertTrue(brokerPods.entrySet().containsAll(policy.getSpec().getPodSelector().getMatchLabels().entrySet()),
                "selects the broker pods");
        assertEquals(List.of("Ingress"), policy.getSpec().getPolicyTypes(), "egress is not restricted");
        NetworkPolicyIngressRule rule = policy.getSpec().getIngress().getFirst();
        assertEquals(1, policy.getSpec().getIngress().size());
        String port = rule.getPorts().getFirst().getPort().getStrVal();
        List<ContainerPort> brokerPorts = AuthChartTest.broker(chart).getPorts();
        assertEquals(List.of(port), brokerPorts.stream().map(ContainerPort::getName).toList(), "exactly the broker's port");

        Map<String, String> operatorPods = chart.operatorDeployment().getSpec().getTemplate().getMetadata().getLabels();
        NetworkPolicyPeer operator = rule.getFrom().getFirst();
        assertNull(operator.getNamespaceSelector(), "the operator of this release, in its namespace");
        assertTrue(operatorPods.entrySet().containsAll(operator.getPodSelector().getMatchLabels().entrySet()));
        assertTrue(!brokerPods.entrySet().containsAll(operator.getPodSelector().getMatchLabels().entrySet()),
                "brokers never call each other: the operator peer must not match them");
    }

    @Test
    void byDefaultLabelledPodsOfEveryNamespaceAreClientsAndNothingElse() {
        List<NetworkPolicyPeer> from = from(RenderedChart.of(ValueSet.DEFAULTS));
        assertEquals(2, from.size(), "the operator and the clients: " + from);
        NetworkPolicyPeer clients = from.get(1);
        assertEquals(Map.of("queen.io/client", "true"), clients.getPodSelector().getMatchLabels());
        LabelSelector namespaces = clients.getNamespaceSelector();
        assertTrue(namespaces != null && (namespaces.getMatchLabels() == null || namespaces.getMatchLabels().isEmpty())
                && (namespaces.getMatchExpressions() == null || namespaces.getMatchExpressions().isEmpty()),
                "an empty namespace selector: every namespace");
    }

    @Test
    void clientsCanBeLimitedToTheReleaseNamespaceWithTheirOwnLabel() {
        NetworkPolicyPeer clients = from(RenderedChart.of(ValueSet.AUTH_JWKS)).get(1);
        assertEquals(Map.of("app-role", "queen-client"), clients.getPodSelector().getMatchLabels());
        assertNull(clients.getNamespaceSelector(), "no namespace selector: the policy's own namespace only");
    }

    @Test
    void metricsScrapersAndExtraPeersAreAdmittedToo() {
        List<NetworkPolicyPeer> from = from(RenderedChart.of(ValueSet.AUTH_SIGNED));
        assertEquals(4, from.size(), from.toString());
        assertEquals(Map.of("kubernetes.io/metadata.name", "monitoring"), from.get(2).getNamespaceSelector().getMatchLabels());
        assertEquals(Map.of("app.kubernetes.io/name", "prometheus"), from.get(2).getPodSelector().getMatchLabels());
        assertEquals(Map.of("kubernetes.io/metadata.name", "ingress-nginx"), from.get(3).getNamespaceSelector().getMatchLabels());
    }

    @Test
    void itCanBeSwitchedOff() throws IOException {
        assertTrue(policy(RenderedChart.withValues("networkPolicy:\n  enabled: false\n")).isEmpty());
    }

    @Test
    void aServiceMonitorWithoutItsScraperAdmittedIsRefused() {
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> RenderedChart.withValues("metrics:\n  serviceMonitor:\n    enabled: true\n"));
        assertTrue(String.valueOf(refused.getMessage()).contains("networkPolicy.metricsScrapers"), refused.getMessage());
    }

    private static Optional<NetworkPolicy> policy(RenderedChart chart) {
        return chart.find(NetworkPolicy.class, chart.brokerStatefulSet().getMetadata().getName());
    }

    private static List<NetworkPolicyPeer> from(RenderedChart chart) {
        return policy(chart).orElseThrow().getSpec().getIngress().getFirst().getFrom();
    }
}
