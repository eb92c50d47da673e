package io.queen.broker.warmup;

import com.nimbusds.jose.jwk.RSAKey;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.TlsSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.CapturedLog;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.TestCertificates;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up reaches a listener a client needs a token or TLS for: with JWT on it sends the
 * process's warm-up pass, whether the broker holds a secret or only a public key (AuthenticatorTest
 * shows the pass refused once revoked); on an HTTPS listener it trusts the listener's own
 * certificate even when that names a Service rather than the loopback it dials.
 */
class SelfWarmupAccessIT {
    @Test
    void withJwtOnItWarmsUpAndAuthStaysOnForEveryoneElse() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_jwt");
        try (CapturedLog log = CapturedLog.of(SelfWarmup.class);
             Broker broker = BrokerFixture.start(db, Map.of("QUEEN_WARMUP_MESSAGES", "2000",
                     "JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET, "JWT_ISSUER", "https://idp.example",
                     "JWT_AUDIENCE", "queen"))) {
            HttpProbe http = new HttpProbe(broker.port());
            await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
            assertTrue(log.contains("warm-up done: 2,000 messages pushed and 2,000 consumed"), log.messages().toString());
            String admin = Jwt.hs256(Jwt.claims("ops", "admin", java.time.Instant.now())
                    .issuer("https://idp.example").audience("queen").build());
            HttpProbe.Reply queues = http.call("GET", "/api/v1/resources/queues", null,
                    Map.of("authorization", "Bearer " + admin));
            assertEquals(200, queues.status(), queues.body());
            assertFalse(queues.body().contains("queen-warmup"), "the warm-up queue is deleted: " + queues.body());
            assertEquals(401, http.get("/api/v1/resources/queues").status(), "auth is still on for everyone else");
        }
    }

    @Test
    void holdingOnlyAnRsPublicKeyItWarmsUpToo() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_rs");
        RSAKey key = Jwt.rsaKey("k1");
        String pem;
        try {
            pem = Jwt.pem(key.toPublicKey().getEncoded());
        } catch (com.nimbusds.jose.JOSEException e) {
            throw new AssertionError(e);
        }
        try (CapturedLog log = CapturedLog.of(SelfWarmup.class);
             Broker broker = BrokerFixture.start(db, Map.of("QUEEN_WARMUP_MESSAGES", "2000",
                     "JWT_ENABLED", "true", "JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", pem))) {
            HttpProbe http = new HttpProbe(broker.port());
            await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
            assertTrue(log.contains("warm-up done: 2,000 messages pushed and 2,000 consumed"), log.messages().toString());
            assertEquals(401, http.get("/api/v1/resources/queues").status(), "auth is still on for everyone else");
        }
    }

    @Test
    void onAnHttpsListenerItTrustsTheListenersOwnCertificate() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_tls");
        Path dir = Files.createTempDirectory("queen-warmup-tls");
        TestCertificates.Issued served = TestCertificates.issueFor("queen", "EC", "queen.queen-system.svc");
        Path cert = Files.writeString(dir.resolve("tls.crt"), served.certificatePem());
        Path key = Files.writeString(dir.resolve("tls.key"), served.privateKeyPem());
        try (CapturedLog log = CapturedLog.of(SelfWarmup.class);
             Broker ignored = BrokerFixture.start(db, Map.of("QUEEN_WARMUP_MESSAGES", "2000",
                     TlsSettings.CERT_FILE, cert.toString(), TlsSettings.KEY_FILE, key.toString()))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> log.contains("warm-up done:")
                    || log.contains("warm-up stopped"));
            assertTrue(log.contains("warm-up done: 2,000 messages pushed and 2,000 consumed"), log.messages().toString());
        } finally {
            Files.deleteIfExists(cert);
            Files.deleteIfExists(key);
            Files.deleteIfExists(dir);
        }
    }
}
