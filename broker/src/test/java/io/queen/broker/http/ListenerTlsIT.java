package io.queen.broker.http;

import io.queen.broker.Broker;
import io.queen.broker.config.ConfigException;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.TlsSettings;
import io.queen.broker.http.tls.TlsReloader;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.CapturedLog;
import io.queen.broker.support.TestCertificates;
import io.queen.broker.support.TestCertificates.Issued;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker's own listener over TLS from PEM files, as a cert-manager Secret mounts them: served
 * from boot, renewed in place without a restart, a broken renewal refused while the last good pair
 * stays, and files that cannot be served stopping the boot with the file named.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ListenerTlsIT {
    static DatabaseSettings db;
    static Path dir;
    static Path cert;
    static Path key;
    static Issued first;
    static Issued renewed;
    static Broker broker;

    @BeforeAll
    static void start() throws IOException {
        db = TestPostgres.freshDatabase("listener_tls");
        dir = Files.createTempDirectory("queen-tls");
        cert = dir.resolve("tls.crt");
        key = dir.resolve("tls.key");
        first = TestCertificates.issue("queen-first", "RSA");
        renewed = TestCertificates.issue("queen-renewed", "EC");
        write(first);
        broker = BrokerFixture.start(db, Map.of(TlsSettings.CERT_FILE, cert.toString(),
                TlsSettings.KEY_FILE, key.toString(), TlsSettings.RELOAD_INTERVAL, "200"));
    }

    @AfterAll
    static void stop() throws IOException {
        if (broker != null) {
            broker.close();
        }
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    @Test
    @Order(1)
    void servesHttpsWithTheMountedCertificateAndNoPlainHttp() throws Exception {
        HttpClient client = HttpClient.newBuilder().sslContext(first.trustingClient()).build();
        HttpResponse<String> health = client.send(HttpRequest.newBuilder(
                URI.create("https://localhost:" + broker.port() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, health.statusCode(), health.body());
        assertEquals("CN=queen-first", servedSubject());

        HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(
                        URI.create("http://localhost:" + broker.port() + "/health")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()), "a plain HTTP request on the TLS port gets no answer");
    }

    @Test
    @Order(2)
    void aRenewedCertificateIsServedWithoutARestart() throws Exception {
        // Key first, then certificate: for a moment the files do not belong together, which must be
        // refused rather than served, and the pair served once the certificate follows.
        Files.writeString(key, renewed.privateKeyPem());
        Files.writeString(cert, renewed.certificatePem());
        await().atMost(Duration.ofSeconds(20)).until(() -> "CN=queen-renewed".equals(servedSubject()));
        HttpClient client = HttpClient.newBuilder().sslContext(renewed.trustingClient()).build();
        assertEquals(200, client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + broker.port() + "/health"))
                .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    @Order(3)
    void aBrokenRenewalIsRefusedAndTheLastGoodCertificateStays() throws Exception {
        try (CapturedLog log = CapturedLog.of(TlsReloader.class)) {
            Files.writeString(cert, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
            await().atMost(Duration.ofSeconds(20)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("TLS reload refused") && m.contains(cert.toString())));
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("bm90IGEgY2VydGlmaWNhdGU")),
                    "the file's content is never logged: " + log.messages());
        }
        assertEquals("CN=queen-renewed", servedSubject(), "the last good certificate is still served");
    }

    @Test
    @Order(4)
    void filesThatCannotBeServedStopTheBootNamingTheFile() throws IOException {
        Path otherKey = dir.resolve("other.key");
        Files.writeString(otherKey, first.privateKeyPem());
        Path goodCert = dir.resolve("renewed.crt");
        Files.writeString(goodCert, renewed.certificatePem());
        ConfigException mismatched = assertThrows(ConfigException.class, () -> BrokerFixture.start(db, Map.of(
                TlsSettings.CERT_FILE, goodCert.toString(), TlsSettings.KEY_FILE, otherKey.toString())));
        assertTrue(mismatched.getMessage().contains("does not belong") && mismatched.getMessage().contains("other.key"),
                mismatched.getMessage());

        Path missing = dir.resolve("missing.crt");
        ConfigException unreadable = assertThrows(ConfigException.class, () -> BrokerFixture.start(db, Map.of(
                TlsSettings.CERT_FILE, missing.toString(), TlsSettings.KEY_FILE, otherKey.toString())));
        assertTrue(unreadable.getMessage().contains("missing.crt") && unreadable.getMessage().contains(TlsSettings.CERT_FILE),
                unreadable.getMessage());
    }

    private static void write(Issued issued) throws IOException {
        Files.writeString(cert, issued.certificatePem());
        Files.writeString(key, issued.privateKeyPem());
    }

    /** The subject of the certificate a new connection is handed (trusting both test certificates). */
    private static String servedSubject() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("first", first.certificate());
        trust.setCertificateEntry("renewed", renewed.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("localhost", broker.port())) {
            socket.setSoTimeout(5000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
        }
    }
}
