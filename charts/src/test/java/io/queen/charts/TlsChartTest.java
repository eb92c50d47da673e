package io.queen.charts;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tls values: the brokers' certificate (cert-manager or an existing Secret) mounted read-only
 * and served on their port, HTTPS probes, the operator calling https with the CA it is given and
 * without the insecure allowance, and the ServiceMonitor scraping over https.
 */
class TlsChartTest {
    private static final String HOST = "queen-broker." + RenderedChart.NAMESPACE + ".svc";
    private static final String CA_FILE = "QUEEN_BROKER_CA_FILE";

    @ParameterizedTest
    @EnumSource(value = ValueSet.class, names = {"TLS_CERT_MANAGER", "TLS_EXISTING_SECRET"}, mode = EnumSource.Mode.EXCLUDE)
    void withoutTlsNothingChangesForThePlainHttpBrokers(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Container broker = AuthChartTest.broker(chart);
        assertTrue(broker.getEnv().stream().noneMatch(v -> v.getName().startsWith("QUEEN_TLS_")), valueSet.toString());
        probes(broker).forEach(p -> assertNull(p.getHttpGet().getScheme(), valueSet + ": HTTP probes"));
        assertEquals("http://" + HOST + ":6632", value(OperatorChartTest.operator(chart), "QUEEN_BROKER_URL"));
        assertTrue(env(OperatorChartTest.operator(chart), CA_FILE).isEmpty());
        assertTrue(chart.ofKind("Certificate").isEmpty());
        chart.all(Service.class).stream().filter(s -> s.getMetadata().getName().startsWith("queen-broker"))
                .forEach(s -> assertNull(s.getSpec().getPorts().getFirst().getAppProtocol()));
    }

    @Test
    void certManagerIssuesACertificateForTheHostTheOperatorCalls() {
        RenderedChart chart = RenderedChart.of(ValueSet.TLS_CERT_MANAGER);
        GenericKubernetesResource certificate = (GenericKubernetesResource) chart.ofKind("Certificate").getFirst();
        assertEquals("cert-manager.io/v1", certificate.getApiVersion());
        Map<?, ?> spec = map(certificate.getAdditionalProperties().get("spec"));
        assertEquals(Map.of("name", "queen-ca", "kind", "ClusterIssuer", "group", "cert-manager.io"), spec.get("issuerRef"));
        List<?> dnsNames = (List<?>) spec.get("dnsNames");
        String operatorHost = URI.create(value(OperatorChartTest.operator(chart), "QUEEN_BROKER_URL")).getHost();
        assertEquals(HOST, operatorHost);
        assertTrue(dnsNames.contains(operatorHost), "the operator checks the host name: " + dnsNames);
        assertTrue(dnsNames.containsAll(List.of("queen-broker", "queen-broker.queen-system",
                "queen-broker.queen-system.svc.cluster.local", "*.queen-broker-headless.queen-system.svc",
                "queen.example.com")), dnsNames.toString());
        Map<?, ?> key = map(spec.get("privateKey"));
        assertEquals("PKCS8", key.get("encoding"), "the broker reads PKCS#8 keys, not SEC1");
        assertEquals("Always", key.get("rotationPolicy"));
        assertEquals("ECDSA", key.get("algorithm"));
        assertEquals(256, ((Number) key.get("size")).intValue());

        // The brokers mount the Secret cert-manager writes.
        assertEquals(spec.get("secretName"), brokerTlsVolume(chart).getSecret().getSecretName());
        assertEquals("queen-broker-tls", spec.get("secretName"));
    }

    @ParameterizedTest
    @EnumSource(value = ValueSet.class, names = {"TLS_CERT_MANAGER", "TLS_EXISTING_SECRET"})
    void theBrokersServeTheMountedPairReadOnlyAndAreProbedOverHttps(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Container broker = AuthChartTest.broker(chart);
        Volume volume = brokerTlsVolume(chart);
        VolumeMount mount = broker.getVolumeMounts().stream().filter(m -> m.getName().equals(volume.getName()))
                .findFirst().orElseThrow();
        assertTrue(mount.getReadOnly(), "the certificate is never written by the broker");
        assertEquals(mount.getMountPath() + "/tls.crt", value(broker, "QUEEN_TLS_CERT_FILE"));
        assertEquals(mount.getMountPath() + "/tls.key", value(broker, "QUEEN_TLS_KEY_FILE"));
        assertEquals(List.of("tls.crt", "tls.key"), volume.getSecret().getItems().stream().map(i -> i.getKey()).toList());
        assertEquals(List.of("tls.crt", "tls.key"), volume.getSecret().getItems().stream().map(i -> i.getPath()).toList());
        assertEquals(0440, volume.getSecret().getDefaultMode());
        assertTrue(volume.getSecret().getOptional() == null || !volume.getSecret().getOptional(),
                "a broker waits for its certificate rather than starting without it");
        probes(broker).forEach(p -> assertEquals("HTTPS", p.getHttpGet().getScheme()));
        chart.all(Service.class).stream().filter(s -> s.getMetadata().getName().startsWith("queen-broker"))
                .forEach(s -> assertEquals("https", s.getSpec().getPorts().getFirst().getAppProtocol(), s.getMetadata().getName()));

        Container operator = OperatorChartTest.operator(chart);
        assertEquals("https://" + HOST + ":6632", value(operator, "QUEEN_BROKER_URL"));
        assertEquals("false", value(operator, "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS"),
                "over https the operator needs no allowance, so the chart gives none");
    }

    @Test
    void theOperatorTrustsCaCrtOfTheCertManagerSecretMountedOptionally() {
        RenderedChart chart = RenderedChart.of(ValueSet.TLS_CERT_MANAGER);
        Volume ca = operatorCaVolume(chart);
        assertEquals("queen-broker-tls", ca.getSecret().getSecretName());
        assertEquals("ca.crt", ca.getSecret().getItems().getFirst().getKey());
        assertTrue(ca.getSecret().getOptional(), "a CA not there yet shows on the resources, not as a pod that never starts");
    }

    @Test
    void anExistingSecretIsMountedAndTheCaComesFromAConfigMap() {
        RenderedChart chart = RenderedChart.of(ValueSet.TLS_EXISTING_SECRET);
        assertTrue(chart.ofKind("Certificate").isEmpty(), "nothing for cert-manager");
        assertEquals("queen-broker-certs", brokerTlsVolume(chart).getSecret().getSecretName());
        assertEquals("5000000", value(AuthChartTest.broker(chart), "QUEEN_TLS_RELOAD_INTERVAL_MS"), "an integer, not 5e+06");
        Volume ca = operatorCaVolume(chart);
        assertEquals("queen-ca-bundle", ca.getConfigMap().getName());
        assertEquals("bundle.pem", ca.getConfigMap().getItems().getFirst().getKey());
        assertTrue(ca.getConfigMap().getOptional());
    }

    @Test
    void aNamedCaSecretOrTheSystemTrustStoreReplaceTheBrokersSecret() throws IOException {
        String base = "tls:\n  enabled: true\n  existingSecret: certs\n  operatorCa:\n";
        Volume named = operatorCaVolume(RenderedChart.withValues(base + "    secretName: corp-ca\n    key: root.pem\n"));
        assertEquals("corp-ca", named.getSecret().getSecretName());
        assertEquals("root.pem", named.getSecret().getItems().getFirst().getKey());

        RenderedChart system = RenderedChart.withValues(base + "    systemTrustStore: true\nmetrics:\n  serviceMonitor:\n"
                + "    enabled: true\nnetworkPolicy:\n  enabled: false\n");
        Container operator = OperatorChartTest.operator(system);
        assertTrue(env(operator, CA_FILE).isEmpty(), "the JDK's default trust store");
        assertTrue(operator.getVolumeMounts().stream().noneMatch(m -> m.getName().equals("broker-ca")));
        Map<?, ?> tlsConfig = map(brokerMonitorEndpoint(system).get("tlsConfig"));
        assertEquals(HOST, tlsConfig.get("serverName"));
        assertFalse(tlsConfig.containsKey("ca"), "Prometheus' own trust store too");
    }

    @Test
    void theServiceMonitorScrapesOverHttpsCheckingTheServiceName() {
        Map<?, ?> endpoint = brokerMonitorEndpoint(RenderedChart.of(ValueSet.TLS_CERT_MANAGER));
        assertEquals("https", endpoint.get("scheme"));
        Map<?, ?> tlsConfig = map(endpoint.get("tlsConfig"));
        assertEquals(HOST, tlsConfig.get("serverName"), "pod addresses are not in the certificate");
        assertEquals(Map.of("secret", Map.of("name", "queen-broker-tls", "key", "ca.crt")), tlsConfig.get("ca"));
        assertNull(brokerMonitorEndpoint(RenderedChart.of(ValueSet.SERVICE_MONITOR)).get("scheme"), "plain HTTP without TLS");
    }

    @Test
    void theInsecureAllowanceDefaultsToTlsBeingOffAndAnExplicitValueIsKept() throws IOException {
        String auth = "auth:\n  enabled: true\n  lookupGeneratedSecret: false\n  operator:\n    tokenLifetime: 10m\n";
        String tls = "tls:\n  enabled: true\n  existingSecret: certs\n";
        assertEquals("true", allowance(RenderedChart.withValues(auth)), "plain HTTP: allowed unless said otherwise");
        assertEquals("false", allowance(RenderedChart.withValues(auth + tls)));
        assertEquals("true", allowance(RenderedChart.withValues(auth + "    allowInsecureCredentials: true\n" + tls)),
                "the user's explicit value wins");
        assertEquals("false", allowance(RenderedChart.withValues(auth + "    allowInsecureCredentials: false\n")));
    }

    @Test
    void anRsaOrEd25519KeyIsRequestedAsTheBrokerReadsIt() throws IOException {
        String base = "tls:\n  enabled: true\n  certManager:\n    enabled: true\n    issuerRef:\n      name: ca\n    privateKey:\n";
        Map<?, ?> rsa = certificateSpec(RenderedChart.withValues(base + "      algorithm: RSA\n      size: 3072\n"));
        assertEquals(3072, ((Number) map(rsa.get("privateKey")).get("size")).intValue());
        assertTrue(((List<?>) rsa.get("usages")).contains("key encipherment"), "RSA key exchange");
        Map<?, ?> ed = certificateSpec(RenderedChart.withValues(base + "      algorithm: Ed25519\n"));
        assertFalse(map(ed.get("privateKey")).containsKey("size"), "Ed25519 has no size");
        assertEquals("Issuer", map(ed.get("issuerRef")).get("kind"), "an Issuer in the release namespace by default");
    }

    @Test
    void valuesThatCouldNeverServeACertificateAreRefused() {
        for (String[] values : List.of(
                new String[] {"tls:\n  enabled: true\n", "tls.existingSecret"},
                new String[] {"tls:\n  enabled: true\n  existingSecret: s\n  certManager:\n    enabled: true\n"
                        + "    issuerRef:\n      name: ca\n", "are alternatives"},
                new String[] {"tls:\n  enabled: true\n  certManager:\n    enabled: true\n", "issuerRef.name is required"},
                new String[] {"tls:\n  enabled: true\n  existingSecret: s\n  operatorCa:\n    secretName: a\n"
                        + "    configMapName: b\n", "tls.operatorCa.secretName and tls.operatorCa.configMapName"},
                new String[] {"tls:\n  certManager:\n    privateKey:\n      algorithm: DSA\n", "/tls/certManager/privateKey/algorithm"},
                new String[] {"tls:\n  reloadIntervalMs: 10\n", "/tls/reloadIntervalMs"})) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> RenderedChart.withValues(values[0]),
                    values[0]);
            assertTrue(String.valueOf(refused.getMessage()).contains(values[1]), values[0] + " -> " + refused.getMessage());
        }
    }

    private static String allowance(RenderedChart chart) {
        return value(OperatorChartTest.operator(chart), "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS");
    }

    private static Map<?, ?> certificateSpec(RenderedChart chart) {
        return map(((GenericKubernetesResource) chart.ofKind("Certificate").getFirst()).getAdditionalProperties().get("spec"));
    }

    private static Map<?, ?> brokerMonitorEndpoint(RenderedChart chart) {
        GenericKubernetesResource monitor = chart.all(GenericKubernetesResource.class).stream()
                .filter(r -> "ServiceMonitor".equals(r.getKind()) && "queen-broker".equals(r.getMetadata().getName()))
                .findFirst().orElseThrow();
        return map(((List<?>) map(monitor.getAdditionalProperties().get("spec")).get("endpoints")).getFirst());
    }

    private static Volume brokerTlsVolume(RenderedChart chart) {
        PodSpec pod = chart.brokerStatefulSet().getSpec().getTemplate().getSpec();
        String certFile = value(pod.getContainers().getFirst(), "QUEEN_TLS_CERT_FILE");
        VolumeMount mount = pod.getContainers().getFirst().getVolumeMounts().stream()
                .filter(m -> certFile.startsWith(m.getMountPath() + "/")).findFirst()
                .orElseThrow(() -> new AssertionError("nothing is mounted where " + certFile + " is"));
        return pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
    }

    /** The volume mounted where QUEEN_BROKER_CA_FILE points, which must name ca.crt. */
    private static Volume operatorCaVolume(RenderedChart chart) {
        PodSpec pod = chart.operatorDeployment().getSpec().getTemplate().getSpec();
        Container operator = pod.getContainers().getFirst();
        String file = value(operator, CA_FILE);
        VolumeMount mount = operator.getVolumeMounts().stream().filter(m -> file.startsWith(m.getMountPath() + "/"))
                .findFirst().orElseThrow(() -> new AssertionError("nothing is mounted where " + file + " is"));
        assertTrue(mount.getReadOnly());
        Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        var items = volume.getSecret() != null ? volume.getSecret().getItems() : volume.getConfigMap().getItems();
        assertEquals(file.substring(mount.getMountPath().length() + 1), items.getFirst().getPath());
        return volume;
    }

    private static List<Probe> probes(Container broker) {
        return List.of(broker.getStartupProbe(), broker.getReadinessProbe(), broker.getLivenessProbe());
    }

    private static Map<?, ?> map(Object value) {
        return (Map<?, ?>) value;
    }

    private static Optional<EnvVar> env(Container container, String name) {
        return container.getEnv().stream().filter(v -> name.equals(v.getName())).findFirst();
    }

    private static String value(Container container, String name) {
        return env(container, name).map(EnvVar::getValue)
                .orElseThrow(() -> new AssertionError(name + " is not set on " + container.getName()));
    }
}
