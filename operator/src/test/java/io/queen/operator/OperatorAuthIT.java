package io.queen.operator;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.queen.operator.brokerclient.CredentialSettings;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.reconcile.Conditions;
import io.queen.operator.support.BrokerApi;
import io.queen.operator.support.Declared;
import io.queen.operator.support.OperatorHarness;
import io.queen.operator.support.RealBroker;
import io.queen.operator.support.TestTokens;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator against the real broker with JWT authentication on (HS256), on the fabric8 mock API
 * server: the tokens it signs itself are accepted as admin, a wrong key or a weaker role shows on the
 * resource, and a token file is read again when its Secret is rotated.
 */
@EnableKubernetesMockClient(crud = true)
class OperatorAuthIT {
    private static final String NS = "apps";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SECRET = "test-broker-secret-of-at-least-32-bytes-0123456789";

    static KubernetesClient client;
    private static RealBroker broker;
    private static BrokerApi admin;
    private QueenOperator operator;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws IOException {
        broker = RealBroker.startWithJwt("operator_auth", SECRET);
        admin = new BrokerApi(broker.url(), TestTokens.hs256(SECRET, "admin"));
        OperatorHarness.installCrds(client);
    }

    @AfterEach
    void stopOperator() {
        if (operator != null) {
            operator.close();
        }
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void theBrokerRefusesCallsWithoutAToken() throws Exception {
        assertEquals(401, new BrokerApi(broker.url()).send("GET", "/api/v1/resources/queues/any", null, null).statusCode(),
                "the broker really has authentication on");
    }

    @Test
    void signedAdminTokensConfigureAndDeleteQueues() throws Exception {
        operator = start(signing(SECRET));
        client.resource(Declared.queue(NS, "signed", QueueDeletionPolicy.Delete)).create();

        awaitReason("signed", "Configured");
        assertTrue(admin.queue(null, "signed").isPresent());

        client.resources(Queue.class).inNamespace(NS).withName("signed").delete();

        // Deleting a queue is an admin route: it passing shows the operator's token carries the admin role.
        await().atMost(WAIT).until(() -> get("signed") == null);
        assertTrue(admin.queue(null, "signed").isEmpty());
    }

    @Test
    void aTokenSignedWithTheWrongKeyIsShownAsUnauthorized() throws Exception {
        operator = start(signing("not-the-broker-secret-but-long-enough-0123456789"));
        client.resource(Declared.queue(NS, "wrong-key", QueueDeletionPolicy.Retain)).create();

        Condition refused = awaitReason("wrong-key", "BrokerUnauthorized");

        assertTrue(refused.getMessage().contains("401 Invalid token signature"), refused.getMessage());
        assertEquals("True", Conditions.find(get("wrong-key").getStatus().getConditions(), Conditions.RECONCILING)
                .orElseThrow().getStatus(), "a recheck is due: a fixed Secret is picked up without a spec change");
        assertTrue(admin.queue(null, "wrong-key").isEmpty());
        delete("wrong-key");
    }

    @Test
    void aReadWriteTokenConfiguresButCannotDeleteUntilTheFileHoldsAnAdminToken() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, TestTokens.hs256(SECRET, "read-write") + "\n", StandardCharsets.UTF_8);
        operator = start(new CredentialSettings(CredentialSettings.Source.TOKEN_FILE, null, file, null, false));
        client.resource(Declared.queue(NS, "rotated", QueueDeletionPolicy.Delete)).create();
        // Reading a queue is read-only, configuring read-write: both pass.
        awaitReason("rotated", "Configured");

        client.resources(Queue.class).inNamespace(NS).withName("rotated").delete();

        Condition forbidden = awaitReason("rotated", "BrokerForbidden");
        assertTrue(forbidden.getMessage().contains("403 Insufficient permissions"), forbidden.getMessage());
        assertTrue(admin.queue(null, "rotated").isPresent(), "the finalizer keeps the resource while the queue stays");

        // As the kubelet does when the mounted Secret changes.
        Files.writeString(file, TestTokens.hs256(SECRET, "admin"), StandardCharsets.UTF_8);

        await().atMost(WAIT).until(() -> get("rotated") == null);
        assertTrue(admin.queue(null, "rotated").isEmpty());
    }

    private static CredentialSettings signing(String secret) {
        return new CredentialSettings(CredentialSettings.Source.SIGNED, null, null, new CredentialSettings.Signing("HS256",
                secret.getBytes(StandardCharsets.UTF_8), null, null, "role", "admin", Duration.ofMinutes(5)), false);
    }

    private static QueenOperator start(CredentialSettings credentials) {
        return OperatorHarness.start(client, broker.url(), OperatorHarness.fastTimings(Duration.ofSeconds(5),
                Duration.ofMinutes(10)), false, Clock.systemUTC(), credentials);
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
