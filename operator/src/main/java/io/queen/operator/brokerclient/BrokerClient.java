package io.queen.operator.brokerclient;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;

/**
 * The broker's admin HTTP API, as the operator uses it. Every call names its tenant (sent as
 * {@code x-queen-tenant}; null means the broker's default tenant) and either returns the broker's
 * answer or throws {@link BrokerUnavailableException} (try again later),
 * {@link BrokerRejectedException} (do not repeat the request) or {@link BrokerSetupException}
 * (the operator's credentials did not get through, or it does not trust the broker's certificate).
 * Every call carries the bearer token of {@link BrokerCredentials}, when there is one.
 */
public class BrokerClient {
    public static final String TENANT_HEADER = "x-queen-tenant";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI baseUrl;
    private final Duration requestTimeout;
    private final BrokerTransport transport;
    private final BrokerCredentials credentials;

    /** Without credentials, for a broker with authentication off. */
    public BrokerClient(URI baseUrl, Duration requestTimeout) {
        this(baseUrl, requestTimeout, BrokerCredentials.NONE);
    }

    public BrokerClient(URI baseUrl, Duration requestTimeout, BrokerCredentials credentials) {
        this(baseUrl, requestTimeout, credentials, null);
    }

    /** {@code caFile}: with an https URL, the PEM CA certificates the broker's certificate must chain to; null for the JDK's. */
    public BrokerClient(URI baseUrl, Duration requestTimeout, BrokerCredentials credentials, Path caFile) {
        // A trailing slash so that a base URL with a path prefix keeps it when routes are resolved.
        this.baseUrl = baseUrl.toString().endsWith("/") ? baseUrl : URI.create(baseUrl + "/");
        this.requestTimeout = requestTimeout;
        this.credentials = credentials;
        this.transport = new BrokerTransport(this.baseUrl, caFile, requestTimeout);
    }

    public URI baseUrl() {
        return baseUrl;
    }

    /** {@code POST /api/v1/configure}; returns the options the broker resolved (all of them, defaults included). */
    public JsonNode configure(String tenantId, ObjectNode body) {
        return send(tenantId, "POST", "/api/v1/configure", body)
                .orElseThrow(() -> new BrokerRejectedException(404, "configure answered 404"))
                .path("options");
    }

    /** {@code GET /api/v1/resources/queues/:queue}; empty when the queue does not exist. */
    public Optional<BrokerQueue> queue(String tenantId, String queueName) {
        return send(tenantId, "GET", "/api/v1/resources/queues/" + segment(queueName), null)
                .map(q -> new BrokerQueue(q.path("name").asText(queueName), text(q, "namespace"), text(q, "task"),
                        q.has("options") ? q.get("options") : null, q.path("totals").path("pending").asLong(0)));
    }

    /**
     * {@code DELETE /api/v1/resources/queues/:queue}; true when a queue was deleted, false when there
     * was none (the broker's {@code existed:false}, or a 404): both mean the queue is gone.
     */
    public boolean deleteQueue(String tenantId, String queueName) {
        return send(tenantId, "DELETE", "/api/v1/resources/queues/" + segment(queueName), null)
                .map(answer -> answer.path("existed").asBoolean(answer.path("deleted").asBoolean(false)))
                .orElse(false);
    }

    /** {@code POST /api/v1/system/tenants/:tenantId/purge}: one bounded step of deleting all of a tenant's data. */
    public TenantPurgeStep purgeTenantStep(String tenantId, int maxQueues, int maxRows) {
        ObjectNode budget = JSON.createObjectNode().put("maxQueues", maxQueues).put("maxRows", maxRows);
        JsonNode step = send(null, "POST", "/api/v1/system/tenants/" + segment(tenantId) + "/purge", budget)
                .orElseThrow(() -> new BrokerRejectedException(404, "tenant purge answered 404"));
        JsonNode queues = step.path("queues");
        return new TenantPurgeStep(step.path("tenant").asText(tenantId), step.path("done").asBoolean(false),
                step.path("phase").asText(""), queues.path("deleted").asLong(0), queues.path("remaining").asLong(0));
    }

    /** A 404 is returned as empty; other refusals and failures are thrown as their class. */
    private Optional<JsonNode> send(String tenantId, String method, String path, JsonNode body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(baseUrl.resolve(path.substring(1)))
                .timeout(requestTimeout)
                .header("Accept", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (tenantId != null) {
            request.header(TENANT_HEADER, tenantId);
        }
        credentials.bearerToken().ifPresent(token -> request.header("Authorization", "Bearer " + token));
        HttpResponse<String> response;
        try {
            response = transport.client().send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            CertificateException refused = certificateRefusal(e);
            if (refused != null) {
                throw new BrokerTlsException(BrokerTlsException.UNTRUSTED, method + " " + path + ": the broker at "
                        + baseUrl + " presented a certificate the operator does not trust (" + refused.getMessage()
                        + "); it trusts " + transport.trust() + ". Nothing was sent.");
            }
            throw new BrokerUnavailableException(method + " " + path + ": broker at " + baseUrl + " unreachable: "
                    + describe(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerUnavailableException(method + " " + path + ": interrupted", e);
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return Optional.of(parse(response.body()));
        }
        String message = errorText(response.body());
        if (status == 401) {
            credentials.refused();
            throw new BrokerCredentialsException(BrokerCredentialsException.UNAUTHORIZED, true, method + " " + path
                    + ": the broker refused the operator's credentials (" + credentials.describe() + "): 401 " + message);
        }
        if (status == 403) {
            throw new BrokerCredentialsException(BrokerCredentialsException.FORBIDDEN, true, method + " " + path
                    + ": the broker accepted the operator's token but not its role (" + credentials.describe()
                    + "): 403 " + message + "; the operator needs the broker's admin role");
        }
        if (status == 404) {
            // The broker's catch-all answers unknown /api routes with 404 too; that is a broker too
            // old for this operator, not an absent object.
            if (message.contains("no_such_route") || response.body().contains("\"no_such_route\"")) {
                throw new BrokerRejectedException(404, method + " " + path + " is not a route of this broker");
            }
            return Optional.empty();
        }
        if (status >= 500 || status == 429 || status == 408) {
            throw new BrokerUnavailableException(method + " " + path + ": broker answered " + status + ": " + message, null);
        }
        throw new BrokerRejectedException(status, message);
    }

    /**
     * The certificate check that failed the handshake, if that is why the call failed: the CA, the
     * validity or the host name. Other TLS failures (a connection cut mid-handshake) stay transient.
     */
    private static CertificateException certificateRefusal(IOException e) {
        CertificateException found = null;
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof CertificateException certificate) {
                // The deepest one says most: "No subject alternative names matching ...", "PKIX path building failed".
                found = certificate;
            }
        }
        return found;
    }

    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return JSON.createObjectNode();
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new BrokerUnavailableException("broker answered with unparseable JSON: " + abbreviate(body), e);
        }
    }

    /** The broker's {@code {"error": "..."}} text when there is one, else the raw body. */
    private static String errorText(String body) {
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && node.hasNonNull("error")) {
                return node.get("error").asText();
            }
        } catch (IOException ignored) {
            // Not JSON: the raw body is the best text there is.
        }
        return abbreviate(body == null ? "" : body);
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? "" : value.asText();
    }

    private static String describe(IOException e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    private static String abbreviate(String text) {
        return text.length() <= 300 ? text : text.substring(0, 300) + "...";
    }
}
