package io.queen.operator;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.brokerclient.BrokerTlsException;
import io.queen.operator.brokerclient.CredentialSettings;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Declared;
import io.queen.operator.support.OperatorHarness;
import io.queen.operator.support.RealBroker;
import io.queen.operator.support.TestCa;
import io.queen.operator.support.TestTokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator against the real broker serving HTTPS only (listener TLS from PEM files, as the
 * chart mounts a cert-manager Secret) with JWT on, on the fabric8 mock API server: with the
 * broker's CA it reconciles and deletes queues with its signed admin token and no insecure
 * allowance; with another CA, or none readable, every Queue says why and nothing is sent, until
 * the CA file is fixed, without a restart.
 */
@EnableKubernetesMockClient(crud = true)
class OperatorTlsIT {
    private static final String NS = "apps";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SECRET = "test-broker-secret-of-at-least-32-bytes-0123456789";

    static KubernetesClient client;
    private static Path tlsDir;
    private static TestCa brokerCa;
    private static RealBroker broker;
    private static BrokerApi admin;
    private QueenOperator operator;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws IOException {
        tlsDir = Files.createTempDirectory("queen-operator-tls");
        brokerCa = TestCa.create("queen-broker-ca");
        brokerCa.issue("localhost", "127.0.0.1").writeTo(tlsDir);
        broker = RealBroker.startWithTls("operator_tls", SECRET, tlsDir.resolve("tls.crt"), tlsDir.resolve("tls.key"));
        admin = new BrokerApi(broker.url(), TestTokens.hs256(SECRET, "admin"), brokerCa.clientContext());
        OperatorHarness.installCrds(client);
    }

    @AfterEach
    void stopOperator() {
        if (operator != null) {
            operator.close();
        }
    }

    @AfterAll
    static void stop() throws IOException {
        if (broker != null) {
            broker.close();
        }
        try (var files = Files.list(tlsDir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(tlsDir);
    }

    @Test
    void theBrokerServesHttpsOnlyWithTheTestCasCertificate() throws Exception {
        assertEquals("https", broker.url().getScheme());
        assertEquals(401, new BrokerApi(broker.url(), null, brokerCa.clientContext())
                .send("GET", "/api/v1/resources/queues/any", null, null).statusCode(), "TLS and authentication are both on");
        URI plain = URI.create("http://127.0.0.1:" + broker.url().getPort());
        assertThrows(IOException.class, () -> new BrokerApi(plain).send("GET", "/health", null, null),
                "no plain HTTP on the TLS port");
        // And the JDK's own trust store does not know the test CA: trust really comes from the CA file.
        assertThrows(SSLException.class, () -> new BrokerApi(broker.url()).send("GET", "/health", null, null));
    }

    @Test
    void withTheBrokersCaTheOperatorConfiguresAndDeletesQueuesWithoutTheInsecureAllowance() throws Exception {
        Path ca = dir.resolve("ca.crt");
        brokerCa.writeTo(ca);
        operator = start(ca);
        client.resource(Declared.queue(NS, "over-tls", QueueDeletionPolicy.Delete)).create();

        awaitReason("over-tls", "Configured");
        assertTrue(admin.queue(null, "over-tls").isPresent());

        client.resources(Queue.class).inNamespace(NS).withName("over-tls").delete();

        // Deleting is an admin route: the signed token went over TLS and was accepted.
        await().atMost(WAIT).until(() -> get("over-tls") == null);
        assertTrue(admin.queue(null, "over-tls").isEmpty());
    }

    @Test
    void aWrongCaShowsAnUntrustedCertificateUntilTheCaFileIsFixed() throws Exception {
        Path ca = dir.resolve("ca.crt");
        TestCa.create("not-the-brokers-ca").writeTo(ca);
        operator = start(ca);
        client.resource(Declared.queue(NS, "wrong-ca", QueueDeletionPolicy.Retain)).create();

        Condition untrusted = awaitReason("wrong-ca", BrokerTlsException.UNTRUSTED);

        assertTrue(untrusted.getMessage().contains("does not trust") && untrusted.getMessage().contains(ca.toString()),
                untrusted.getMessage());
        assertFalse(untrusted.getMessage().contains(SECRET));
        assertEquals("True", Conditions.find(get("wrong-ca").getStatus().getConditions(), Conditions.RECONCILING)
                .orElseThrow().getStatus(), "a recheck is due: a fixed CA is picked up without a spec change");
        assertTrue(admin.queue(null, "wrong-ca").isEmpty());

        // As the kubelet does when the mounted CA Secret is corrected.
        Files.writeString(ca, brokerCa.pem(), StandardCharsets.UTF_8);

        awaitReason("wrong-ca", "Configured");
        assertTrue(admin.queue(null, "wrong-ca").isPresent());
        delete("wrong-ca");
    }

    @Test
    void anUnreadableCaFileIsShownOnTheQueue() {
        operator = start(dir.resolve("no-such-ca.crt"));
        client.resource(Declared.queue(NS, "no-ca", QueueDeletionPolicy.Retain)).create();

        Condition unavailable = awaitReason("no-ca", BrokerTlsException.CA_UNAVAILABLE);

        assertTrue(unavailable.getMessage().contains("QUEEN_BROKER_CA_FILE"), unavailable.getMessage());
        delete("no-ca");
    }

    private static QueenOperator start(Path caFile) {
        CredentialSettings signing = new CredentialSettings(CredentialSettings.Source.SIGNED, null, null,
                new CredentialSettings.Signing("HS256", SECRET.getBytes(StandardCharsets.UTF_8), null, null, "role", "admin",
                        Duration.ofMinutes(5)), false);
        return OperatorHarness.start(client, broker.url(), OperatorHarness.fastTimings(Duration.ofSeconds(5),
                Duration.ofMinutes(10)), false, Clock.systemUTC(), signing, caFile);
    }

    private static Queue get(String name) {
        return client.resources(Queue.class).inNamespace(NS).withName(name).get();
    }

    private static Optional<Condition> ready(String name) {
        Queue q = get(name);
        return q == null || q.getStatus() == null ? Optional.empty() : Conditions.find(q.getStatus().getConditions(), Conditions.READY);
    }

    private static Condition awaitReason(String name, String reason) {
        await().atMost(WAIT).until(() -> ready(name).map(c -> reason.equals(c.getReason())).orElse(false));
        return ready(name).orElseThrow();
    }

    private static void delete(String name) {
        client.resources(Queue.class).inNamespace(NS).withName(name).delete();
        await().atMost(WAIT).until(() -> get(name) == null);
    }
}
