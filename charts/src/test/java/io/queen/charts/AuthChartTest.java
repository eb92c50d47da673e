package io.queen.charts;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The auth values: the brokers' JWT environment, the generated key, and the operator's admin credentials. */
class AuthChartTest {
    private static final String GENERATED = RenderedChart.RELEASE + "-broker-jwt";

    @Test
    void authIsOffByDefault() {
        RenderedChart chart = RenderedChart.of(ValueSet.DEFAULTS);
        assertTrue(broker(chart).getEnv().stream().noneMatch(v -> v.getName().startsWith("JWT_")), "no JWT variable");
        assertTrue(OperatorChartTest.operator(chart).getEnv().stream().noneMatch(v -> v.getName().startsWith("QUEEN_OPERATOR_")));
        assertTrue(chart.all(Secret.class).isEmpty(), "no Secret is made while auth is off");
    }

    @Test
    void aGeneratedKeyIsSharedByTheBrokersAndTheSigningOperator() {
        RenderedChart chart = RenderedChart.of(ValueSet.AUTH_SIGNED);
        Secret secret = chart.one(Secret.class, GENERATED);
        String key = new String(Base64.getDecoder().decode(secret.getData().get("JWT_SECRET")), StandardCharsets.UTF_8);
        assertTrue(key.matches("[A-Za-z0-9]{64}"), "64 random letters and digits: enough for HS512 too");

        Container broker = broker(chart);
        assertEquals("true", value(broker, "JWT_ENABLED"));
        assertEquals("HS384", value(broker, "JWT_ALGORITHM"));
        assertEquals("queen-issuer", value(broker, "JWT_ISSUER"));
        assertEquals("queen-brokers", value(broker, "JWT_AUDIENCE"));
        assertRef(secretRef(broker, "JWT_SECRET"), GENERATED, "JWT_SECRET");

        Container operator = OperatorChartTest.operator(chart);
        assertRef(secretRef(operator, "QUEEN_OPERATOR_JWT_SECRET"), GENERATED, "JWT_SECRET");
        assertEquals("HS384", value(operator, "QUEEN_OPERATOR_JWT_ALGORITHM"), "the operator signs as the brokers verify");
        assertEquals("queen-issuer", value(operator, "QUEEN_OPERATOR_JWT_ISSUER"));
        assertEquals("queen-brokers", value(operator, "QUEEN_OPERATOR_JWT_AUDIENCE"));
        assertEquals("15m", value(operator, "QUEEN_OPERATOR_TOKEN_LIFETIME"));
        assertEquals("true", value(operator, "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS"),
                "the chart's broker URL is plain HTTP: the chart says so explicitly");
        assertTrue(env(operator, "QUEEN_OPERATOR_TOKEN_FILE").isEmpty());
    }

    @Test
    void theKubeletsProbesNeedNoTokenWithAuthOn() {
        for (ValueSet set : List.of(ValueSet.AUTH_SIGNED, ValueSet.AUTH_JWKS)) {
            Container broker = broker(RenderedChart.of(set));
            List<String> skipped = List.of(value(broker, "JWT_SKIP_PATHS").split(","));
            // /health and /ready are public in the broker itself; /status needs a token unless skipped.
            assertTrue(skipped.contains(broker.getLivenessProbe().getHttpGet().getPath()), set + ": " + skipped);
            assertTrue(skipped.contains(broker.getStartupProbe().getHttpGet().getPath()), set + ": " + skipped);
            assertTrue(skipped.containsAll(List.of("/health", "/metrics/prometheus", "/metrics", "/")),
                    set + ": the broker's default public paths stay: " + skipped);
        }
    }

    @Test
    void eachRenderingWithoutAClusterMakesAFreshKey() throws IOException {
        String values = "auth:\n  enabled: true\n  lookupGeneratedSecret: false\n";
        String first = RenderedChart.withValues(values).one(Secret.class, GENERATED).getData().get("JWT_SECRET");
        String second = RenderedChart.withValues(values).one(Secret.class, GENERATED).getData().get("JWT_SECRET");
        // On a cluster, lookup keeps the installed key instead (AuthOnClusterIT in the operator checks that).
        assertNotEquals(first, second, "a random key, not a constant in the chart");
    }

    @Test
    void anExistingSecretIsUsedAndNothingIsGenerated() throws IOException {
        RenderedChart chart = RenderedChart.withValues("auth:\n  enabled: true\n  algorithm: auto\n"
                + "  existingSecret: my-jwt\n  secretKey: hmac\n");
        assertTrue(chart.all(Secret.class).isEmpty());
        assertRef(secretRef(broker(chart), "JWT_SECRET"), "my-jwt", "hmac");
        Container operator = OperatorChartTest.operator(chart);
        assertRef(secretRef(operator, "QUEEN_OPERATOR_JWT_SECRET"), "my-jwt", "hmac");
        assertEquals("HS256", value(operator, "QUEEN_OPERATOR_JWT_ALGORITHM"), "auto takes HS256 tokens");
        assertEquals("auto", value(broker(chart), "JWT_ALGORITHM"));
    }

    @Test
    void withAnIdentityProviderTheOperatorReadsItsTokenFromAMountedSecret() {
        RenderedChart chart = RenderedChart.of(ValueSet.AUTH_JWKS);
        Container broker = broker(chart);
        assertEquals("RS256", value(broker, "JWT_ALGORITHM"));
        assertEquals("https://idp.example.com/.well-known/jwks.json", value(broker, "JWT_JWKS_URL"));
        assertTrue(env(broker, "JWT_SECRET").isEmpty(), "no HMAC key for RS tokens");
        assertTrue(chart.all(Secret.class).isEmpty(), "no key is generated");

        PodSpec pod = chart.operatorDeployment().getSpec().getTemplate().getSpec();
        Container operator = pod.getContainers().getFirst();
        String file = value(operator, "QUEEN_OPERATOR_TOKEN_FILE");
        assertTrue(env(operator, "QUEEN_OPERATOR_JWT_SECRET").isEmpty());
        assertEquals("false", value(operator, "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS"));
        VolumeMount mount = operator.getVolumeMounts().stream().filter(m -> file.startsWith(m.getMountPath() + "/"))
                .findFirst().orElseThrow(() -> new AssertionError("nothing is mounted where " + file + " is"));
        assertTrue(mount.getReadOnly());
        Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        assertEquals("queen-operator-token", volume.getSecret().getSecretName());
        assertEquals("jwt", volume.getSecret().getItems().getFirst().getKey());
        assertEquals(file.substring(mount.getMountPath().length() + 1), volume.getSecret().getItems().getFirst().getPath());
    }

    @Test
    void theSchemaJobSourceCarriesNoOperatorCredential() {
        // The broker container is what the schema Job copies (minus JWT_*): no operator token belongs there.
        Container broker = broker(RenderedChart.of(ValueSet.AUTH_JWKS));
        assertTrue(broker.getEnv().stream().noneMatch(v -> v.getName().startsWith("QUEEN_OPERATOR_")));
        assertTrue(broker.getVolumeMounts().stream().noneMatch(m -> m.getName().equals("operator-token")));
    }

    @Test
    void combinationsThatCouldNeverAuthenticateAreRefused() {
        for (String[] values : List.of(
                new String[] {"auth:\n  enabled: true\n  jwksUrl: https://idp/jwks\n  operator:\n    tokenSecret: t\n", "takes HS tokens only"},
                new String[] {"auth:\n  enabled: true\n  algorithm: EdDSA\n  operator:\n    tokenSecret: t\n", "needs auth.jwksUrl"},
                new String[] {"auth:\n  enabled: true\n  algorithm: RS256\n  jwksUrl: https://idp/jwks\n", "auth.operator.tokenSecret is required"},
                new String[] {"auth:\n  enabled: true\n  algorithm: HS999\n", "/auth/algorithm"})) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> RenderedChart.withValues(values[0]),
                    values[0]);
            assertTrue(String.valueOf(refused.getMessage()).contains(values[1]), values[0] + " -> " + refused.getMessage());
        }
    }

    @Test
    void aPublicKeyInTheBrokerEnvironmentIsEnoughForRsTokens() throws IOException {
        RenderedChart chart = RenderedChart.withValues("auth:\n  enabled: true\n  algorithm: RS256\n  operator:\n"
                + "    tokenSecret: t\nbroker:\n  env:\n    JWT_PUBLIC_KEY: \"-----BEGIN PUBLIC KEY-----\"\n");
        assertFalse(env(broker(chart), "JWT_JWKS_URL").isPresent());
        assertEquals("RS256", value(broker(chart), "JWT_ALGORITHM"));
    }

    static Container broker(RenderedChart chart) {
        return chart.brokerStatefulSet().getSpec().getTemplate().getSpec().getContainers().getFirst();
    }

    private static Optional<EnvVar> env(Container container, String name) {
        return container.getEnv().stream().filter(v -> name.equals(v.getName())).findFirst();
    }

    private static String value(Container container, String name) {
        return env(container, name).map(EnvVar::getValue)
                .orElseThrow(() -> new AssertionError(name + " is not set on " + container.getName()));
    }

    private static SecretKeySelector secretRef(Container container, String name) {
        EnvVar v = env(container, name).orElseThrow(() -> new AssertionError(name + " is not set on " + container.getName()));
        assertTrue(v.getValue() == null, name + " must come from a Secret, never a literal");
        return v.getValueFrom().getSecretKeyRef();
    }

    private static void assertRef(SecretKeySelector ref, String secret, String key) {
        assertEquals(secret, ref.getName());
        assertEquals(key, ref.getKey());
    }
}
