package io.queen.operator;

import io.queen.operator.brokerclient.CredentialSettings;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OperatorSettingsTest {

    @Test
    void defaultsAreProductionSafe() {
        OperatorSettings s = OperatorSettings.from(Map.of());

        assertEquals(URI.create("http://queen-broker:6632/"), s.brokerUrl());
        assertTrue(s.useSsa(), "server-side apply stays on outside tests");
        assertTrue(s.leaderElection());
        assertEquals(Set.of(), s.watchNamespaces(), "all namespaces");
        assertEquals(Duration.ofMinutes(5), s.timings().resync());
        assertEquals(Duration.ofMinutes(10), s.timings().brokerGiveUp());
        assertEquals(8080, s.httpPort());
        assertTrue(s.evictPods(), "brokers are evicted, so their PodDisruptionBudget applies");
        assertNull(s.rolloutNamespace(), "without the chart's setting, rollouts follow the watched namespaces");
    }

    @Test
    void theLeaseHolderIsThePodUnlessNamed() {
        assertEquals("queen-operator-7d9f-x2", OperatorSettings.from(Map.of("HOSTNAME", "queen-operator-7d9f-x2")).leaseIdentity());
        assertEquals("replica-a", OperatorSettings.from(Map.of("HOSTNAME", "h", "LEADER_ELECTION_IDENTITY", "replica-a"))
                .leaseIdentity());
        assertEquals("queen-system", OperatorSettings.from(Map.of("ROLLOUT_NAMESPACE", " queen-system ")).rolloutNamespace());
    }

    @Test
    void valuesAreReadWithTheirUnits() {
        OperatorSettings s = OperatorSettings.from(Map.of("WATCH_NAMESPACES", "team-a, team-b", "RESYNC_INTERVAL", "90s",
                "ROLL_READY_TIMEOUT", "PT2M", "PURGE_STEP_INTERVAL", "250ms", "USE_SSA", "false",
                "QUEEN_BROKER_URL", "http://broker.queen.svc:6632/prefix"));

        assertEquals(Set.of("team-a", "team-b"), s.watchNamespaces());
        assertEquals(Duration.ofSeconds(90), s.timings().resync());
        assertEquals(Duration.ofMinutes(2), s.rolloutReadyTimeout());
        assertEquals(Duration.ofMillis(250), s.timings().purgeStep());
        assertFalse(s.useSsa());
        assertEquals(URI.create("http://broker.queen.svc:6632/prefix/"), s.brokerUrl());
    }

    @Test
    void aBadValueStopsTheStartNamingTheVariable() {
        var e = assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of("RESYNC_INTERVAL", "soon")));
        assertTrue(e.getMessage().startsWith("RESYNC_INTERVAL=\"soon\""), e.getMessage());

        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of("QUEEN_BROKER_URL", "broker:6632")));
        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of("LEADER_ELECTION", "maybe")));
        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of("BROKER_GIVE_UP_AFTER", "0s")));
    }

    private static final String SECRET = "k".repeat(32);

    @Test
    void withoutCredentialVariablesNoCredentialsAreSentAndPlainHttpIsNotAllowed() {
        CredentialSettings c = OperatorSettings.from(Map.of()).credentials();

        assertEquals(CredentialSettings.Source.NONE, c.source());
        assertFalse(c.allowInsecure());
    }

    @Test
    void eachCredentialSourceIsReadFromItsVariable() {
        assertEquals(Path.of("/var/run/queen/token"), OperatorSettings.from(Map.of("QUEEN_OPERATOR_TOKEN_FILE",
                "/var/run/queen/token")).credentials().tokenFile());
        assertEquals("a.b.c", OperatorSettings.from(Map.of("QUEEN_OPERATOR_TOKEN", " Bearer a.b.c\n")).credentials().token());

        CredentialSettings signed = OperatorSettings.from(Map.of("QUEEN_OPERATOR_JWT_SECRET", SECRET,
                "QUEEN_OPERATOR_JWT_ISSUER", "idp", "QUEEN_OPERATOR_TOKEN_LIFETIME", "15m",
                "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS", "true")).credentials();
        assertEquals(CredentialSettings.Source.SIGNED, signed.source());
        assertEquals("HS256", signed.signing().algorithm());
        assertEquals("idp", signed.signing().issuer());
        assertNull(signed.signing().audience());
        assertEquals("role", signed.signing().roleClaim());
        assertEquals("admin", signed.signing().role());
        assertEquals(Duration.ofMinutes(15), signed.signing().lifetime());
        assertTrue(signed.allowInsecure());
        assertFalse(signed.toString().contains(SECRET), "settings never print the secret");
    }

    @Test
    void twoCredentialSourcesAreRefusedNamingThem() {
        var e = assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_TOKEN_FILE", "/t", "QUEEN_OPERATOR_JWT_SECRET", SECRET)));
        assertTrue(e.getMessage().contains("QUEEN_OPERATOR_TOKEN_FILE") && e.getMessage().contains("set one of them"),
                e.getMessage());
        assertEquals(CredentialSettings.Source.SIGNED, OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_TOKEN_FILE", " ", "QUEEN_OPERATOR_JWT_SECRET", SECRET)).credentials().source(),
                "a blank variable counts as unset");
    }

    @Test
    void aSecretTooShortForItsAlgorithmIsRefusedWithoutRepeatingIt() {
        var e = assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_JWT_SECRET", SECRET, "QUEEN_OPERATOR_JWT_ALGORITHM", "HS384")));
        assertTrue(e.getMessage().contains("32 bytes") && e.getMessage().contains("48"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());

        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_JWT_SECRET", SECRET, "QUEEN_OPERATOR_JWT_ALGORITHM", "RS256")));
        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_JWT_SECRET", SECRET, "QUEEN_OPERATOR_TOKEN_LIFETIME", "30s")));
        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_TOKEN", "two words")));
        assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS", "maybe")));
    }

    @Test
    void aBrokerCaFileIsTakenForAnHttpsUrlAndRefusedForPlainHttp() {
        assertNull(OperatorSettings.from(Map.of()).brokerCaFile(), "the JDK's default trust store");
        OperatorSettings tls = OperatorSettings.from(Map.of("QUEEN_BROKER_URL", "https://queen-broker.q.svc:6632",
                "QUEEN_BROKER_CA_FILE", " /var/run/secrets/queen-broker-ca/ca.crt "));
        assertEquals(Path.of("/var/run/secrets/queen-broker-ca/ca.crt"), tls.brokerCaFile());
        assertEquals("https", tls.brokerUrl().getScheme());

        var e = assertThrows(IllegalArgumentException.class, () -> OperatorSettings.from(Map.of(
                "QUEEN_BROKER_URL", "http://queen-broker:6632", "QUEEN_BROKER_CA_FILE", "/ca.crt")));
        assertTrue(e.getMessage().contains("QUEEN_BROKER_CA_FILE") && e.getMessage().contains("plain HTTP"), e.getMessage());
        assertNull(OperatorSettings.from(Map.of("QUEEN_BROKER_CA_FILE", " ")).brokerCaFile(), "blank counts as unset");
    }
}
