package io.queen.operator.brokerclient;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.queen.operator.support.TestCa;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client against an HTTPS server with a certificate from a test CA: trusted through the CA
 * file, which is read again when it changes; a wrong CA, a certificate for another host and an
 * unreadable CA file are refusals with their own reasons, and nothing is sent.
 */
class BrokerClientTlsTest {
    private static final String TOKEN = "eyJhbGciOiJIUzI1NiJ9.e30.c2ln";

    @TempDir
    Path dir;

    private HttpsServer server;
    private final AtomicReference<String> authorization = new AtomicReference<>();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aBrokerCertificateFromTheTrustedCaIsAcceptedAndTheTokenSentWithoutTheInsecureAllowance() throws IOException {
        TestCa ca = TestCa.create("queen-test-ca");
        URI url = serve(ca.issue("localhost", "127.0.0.1"));
        Path caFile = dir.resolve("ca.crt");
        ca.writeTo(caFile);
        // allowInsecure false: over https the token needs no allowance.
        BrokerCredentials credentials = BrokerCredentials.from(new CredentialSettings(CredentialSettings.Source.TOKEN,
                TOKEN, null, null, false), url, Clock.systemUTC());
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), credentials, caFile);

        assertTrue(client.queue(null, "orders").isPresent());
        assertEquals("Bearer " + TOKEN, authorization.get());
    }

    @Test
    void aCertificateFromAnotherCaIsRefusedAsUntrustedAndNothingIsSent() throws IOException {
        URI url = serve(TestCa.create("the-brokers-ca").issue("localhost", "127.0.0.1"));
        Path caFile = dir.resolve("ca.crt");
        TestCa.create("some-other-ca").writeTo(caFile);
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), new StaticToken(TOKEN), caFile);

        BrokerTlsException e = assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));

        assertEquals(BrokerTlsException.UNTRUSTED, e.reason());
        assertFalse(e.brokerAnswered());
        assertTrue(e.getMessage().contains("does not trust") && e.getMessage().contains(caFile.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("PKIX"), "the JDK's reason is kept: " + e.getMessage());
        assertFalse(e.getMessage().contains(TOKEN));
        assertEquals(null, authorization.get(), "the request never reached the server");
        assertInstanceOf(BrokerSetupException.class, e, "reconcilers treat it like refused credentials");
    }

    @Test
    void theHostNameIsChecked() throws IOException {
        TestCa ca = TestCa.create("queen-test-ca");
        // Valid and from the trusted CA, but for another name: 127.0.0.1 is not among its names.
        URI url = serve(ca.issue("queen-broker.queen-system.svc"));
        Path caFile = dir.resolve("ca.crt");
        ca.writeTo(caFile);
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), BrokerCredentials.NONE, caFile);

        BrokerTlsException e = assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));

        assertEquals(BrokerTlsException.UNTRUSTED, e.reason());
        assertTrue(e.getMessage().contains("127.0.0.1"), "the mismatching host is named: " + e.getMessage());
    }

    @Test
    void aRotatedCaFileIsReadAgainWithoutANewClient() throws IOException {
        TestCa oldCa = TestCa.create("old-ca");
        TestCa newCa = TestCa.create("new-ca");
        URI url = serve(newCa.issue("127.0.0.1"));
        Path caFile = dir.resolve("ca.crt");
        oldCa.writeTo(caFile);
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), BrokerCredentials.NONE, caFile);
        assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));

        // As the kubelet does when the mounted CA Secret changes: both CAs during the hand-over.
        Files.writeString(caFile, oldCa.pem() + newCa.pem(), StandardCharsets.UTF_8);

        assertTrue(client.queue(null, "orders").isPresent());
    }

    @Test
    void anUnreadableOrEmptyCaFileIsReportedByNameWithoutCallingTheBroker() throws IOException {
        URI url = serve(TestCa.create("ca").issue("127.0.0.1"));
        Path caFile = dir.resolve("missing-ca.crt");
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), new StaticToken(TOKEN), caFile);

        BrokerTlsException missing = assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));
        assertEquals(BrokerTlsException.CA_UNAVAILABLE, missing.reason());
        assertTrue(missing.getMessage().contains(caFile.toString()) && missing.getMessage().contains("QUEEN_BROKER_CA_FILE"),
                missing.getMessage());

        Files.writeString(caFile, "not a certificate\n", StandardCharsets.UTF_8);
        BrokerTlsException garbage = assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));
        assertEquals(BrokerTlsException.CA_UNAVAILABLE, garbage.reason());
        assertTrue(garbage.getMessage().contains("cannot be used"), garbage.getMessage());
        assertFalse(garbage.getMessage().contains("not a certificate"), "the file's content is never repeated");
        assertEquals(null, authorization.get());
    }

    @Test
    void withoutACaFileTheJdkTrustStoreDecidesAndATestCaIsNotInIt() throws IOException {
        URI url = serve(TestCa.create("private-ca").issue("127.0.0.1"));
        BrokerClient client = new BrokerClient(url, Duration.ofSeconds(5), BrokerCredentials.NONE, null);

        BrokerTlsException e = assertThrows(BrokerTlsException.class, () -> client.queue(null, "orders"));

        assertEquals(BrokerTlsException.UNTRUSTED, e.reason());
        assertTrue(e.getMessage().contains("default trust store"), e.getMessage());
    }

    @Test
    void aCaFileIsIgnoredForPlainHttp() {
        // OperatorSettings refuses the combination; the client itself never reads the file then.
        BrokerClient client = new BrokerClient(URI.create("http://127.0.0.1:1"), Duration.ofSeconds(1),
                BrokerCredentials.NONE, dir.resolve("absent"));
        assertThrows(BrokerUnavailableException.class, () -> client.queue(null, "orders"));
    }

    private URI serve(TestCa.Leaf certificate) throws IOException {
        server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(certificate.serverContext()));
        server.createContext("/", exchange -> {
            authorization.set(exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] out = "{\"name\":\"orders\",\"totals\":{\"pending\":0}}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, out.length);
            exchange.getResponseBody().write(out);
            exchange.close();
        });
        server.start();
        return URI.create("https://127.0.0.1:" + server.getAddress().getPort());
    }
}
