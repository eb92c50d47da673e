package io.queen.operator.brokerclient;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client against a scripted HTTP server: what each broker answer becomes for the caller. */
class BrokerClientTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpServer server;
    private volatile int status;
    private volatile String body;
    private volatile String authorization;
    private final List<String> seen = new ArrayList<>();
    private BrokerClient client;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String tenant = exchange.getRequestHeaders().getFirst(BrokerClient.TENANT_HEADER);
            authorization = exchange.getRequestHeaders().getFirst("Authorization");
            String sent = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            synchronized (seen) {
                seen.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath() + " tenant=" + tenant
                        + (sent.isEmpty() ? "" : " " + sent));
            }
            byte[] out = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
            exchange.getResponseBody().write(out);
            exchange.close();
        });
        server.start();
        client = new BrokerClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), Duration.ofSeconds(5));
    }

    private void withCredentials(BrokerCredentials credentials) {
        client = new BrokerClient(client.baseUrl(), Duration.ofSeconds(5), credentials);
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void configureSendsTheBodyAndTenantHeaderAndReturnsTheResolvedOptions() throws Exception {
        answer(200, "{\"configured\":true,\"queue\":\"orders\",\"options\":{\"leaseTime\":120}}");

        var options = client.configure("6b1e0000-0000-4000-8000-00000000abcd",
                (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree("{\"queue\":\"orders\",\"mode\":\"replace\"}"));

        assertEquals(120, options.path("leaseTime").asInt());
        assertEquals("POST /api/v1/configure tenant=6b1e0000-0000-4000-8000-00000000abcd {\"queue\":\"orders\",\"mode\":\"replace\"}",
                seen.get(0));
    }

    @Test
    void everyCallCarriesTheBearerTokenAndNoneWithoutCredentials() {
        answer(200, "{\"name\":\"orders\"}");
        client.queue(null, "orders");
        assertNull(authorization, "no credentials, no Authorization header");

        withCredentials(new StaticToken("header.payload.signature"));
        client.queue(null, "orders");

        assertEquals("Bearer header.payload.signature", authorization);
    }

    @Test
    void a401IsACredentialsRefusalWithTheBrokersTextAndDropsACachedToken() {
        var refusals = new java.util.concurrent.atomic.AtomicInteger();
        withCredentials(new BrokerCredentials() {
            @Override
            public java.util.Optional<String> bearerToken() {
                return java.util.Optional.of("t.t.t");
            }

            @Override
            public void refused() {
                refusals.incrementAndGet();
            }

            @Override
            public String describe() {
                return "a test token";
            }
        });
        answer(401, "{\"error\":\"Invalid token signature\",\"code\":\"unauthorized\"}");

        var e = assertThrows(BrokerCredentialsException.class, () -> client.configure(null, JSON.createObjectNode()));

        assertEquals(BrokerCredentialsException.UNAUTHORIZED, e.reason());
        assertTrue(e.brokerAnswered());
        assertTrue(e.getMessage().contains("401 Invalid token signature") && e.getMessage().contains("a test token"),
                e.getMessage());
        assertEquals(1, refusals.get());
    }

    @Test
    void a403SaysTheTokenLacksTheAdminRole() {
        withCredentials(new StaticToken("t.t.t"));
        answer(403, "{\"error\":\"Insufficient permissions\"}");

        var e = assertThrows(BrokerCredentialsException.class, () -> client.deleteQueue(null, "orders"));

        assertEquals(BrokerCredentialsException.FORBIDDEN, e.reason());
        assertTrue(e.getMessage().contains("admin role") && e.getMessage().contains("Insufficient permissions"), e.getMessage());
    }

    @Test
    void credentialsRefusedOverPlainHttpAreNeverSent() {
        answer(200, "{}");
        // The refusal comes before any connection: this host does not even need to exist.
        URI plain = URI.create("http://queen-broker.invalid:6632");
        BrokerClient refusing = new BrokerClient(plain, Duration.ofSeconds(5), BrokerCredentials.from(
                new CredentialSettings(CredentialSettings.Source.TOKEN, "t.t.t", null, null, false), plain,
                java.time.Clock.systemUTC()));

        var e = assertThrows(BrokerCredentialsException.class, () -> refusing.queue(null, "orders"));

        assertEquals(BrokerCredentialsException.INSECURE, e.reason());
        assertFalse(e.brokerAnswered());
    }

    @Test
    void aBadRequestIsPermanentAndCarriesTheBrokersMessage() {
        answer(400, "{\"error\":\"retentionSinkHoldMaxSeconds must be between 60 and 31536000\",\"invalid\":\"retentionSinkHoldMaxSeconds\"}");

        var e = assertThrows(BrokerRejectedException.class, () -> client.configure(null, JSON.createObjectNode()));

        assertEquals(400, e.statusCode());
        assertEquals("retentionSinkHoldMaxSeconds must be between 60 and 31536000", e.brokerMessage());
    }

    @Test
    void serverErrorsAndUnavailabilityAreTransient() {
        answer(503, "{\"error\":\"draining\"}");
        var e = assertThrows(BrokerUnavailableException.class, () -> client.queue(null, "orders"));
        assertTrue(e.getMessage().contains("503") && e.getMessage().contains("draining"), e.getMessage());

        answer(500, "boom");
        assertThrows(BrokerUnavailableException.class, () -> client.deleteQueue(null, "orders"));
    }

    @Test
    void anUnreachableBrokerIsTransient() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        BrokerClient nowhere = new BrokerClient(URI.create("http://127.0.0.1:" + closedPort), Duration.ofSeconds(2));

        var e = assertThrows(BrokerUnavailableException.class, () -> nowhere.queue(null, "orders"));
        assertTrue(e.getMessage().contains("unreachable"), e.getMessage());
    }

    @Test
    void aMissingQueueIsEmptyAndItsDeleteIsNotAnError() {
        answer(404, "{\"error\":\"Queue not found\"}");
        assertTrue(client.queue(null, "orders").isEmpty());
        assertFalse(client.deleteQueue(null, "orders"));

        answer(200, "{\"deleted\":false,\"queue\":\"orders\",\"existed\":false,\"message\":\"Queue not found, nothing was deleted\"}");
        assertFalse(client.deleteQueue(null, "orders"));

        answer(200, "{\"deleted\":true,\"queue\":\"orders\",\"existed\":true}");
        assertTrue(client.deleteQueue(null, "orders"));
    }

    @Test
    void aRouteTheBrokerDoesNotHaveIsPermanentNotAMissingObject() {
        answer(404, "{\"error\":\"Not Found\",\"code\":\"no_such_route\"}");

        assertThrows(BrokerRejectedException.class, () -> client.deleteQueue(null, "orders"));
    }

    @Test
    void queueNamesAreEscapedAndTheDefaultTenantSendsNoHeader() {
        answer(200, "{\"name\":\"a b/c\",\"namespace\":\"billing\",\"task\":null,\"totals\":{\"pending\":7}}");

        var queue = client.queue(null, "a b/c").orElseThrow();

        assertEquals("GET /api/v1/resources/queues/a%20b%2Fc tenant=null", seen.get(0));
        assertEquals("billing", queue.namespace());
        assertEquals("", queue.task());
        assertEquals(7, queue.pending());
        assertNull(queue.options());
    }

    @Test
    void aPurgeStepReportsItsProgress() {
        answer(200, "{\"tenant\":\"t\",\"done\":false,\"phase\":\"queues\",\"queues\":{\"deleted\":10,\"remaining\":5},\"rows\":{}}");

        TenantPurgeStep step = client.purgeTenantStep("6b1e0000-0000-4000-8000-00000000abcd", 10, 20000);

        assertEquals(new TenantPurgeStep("t", false, "queues", 10, 5), step);
        assertTrue(seen.get(0).startsWith("POST /api/v1/system/tenants/6b1e0000-0000-4000-8000-00000000abcd/purge"), seen.get(0));
    }

    private void answer(int status, String body) {
        this.status = status;
        this.body = body;
    }
}
