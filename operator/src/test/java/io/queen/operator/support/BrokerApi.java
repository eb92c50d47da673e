package io.queen.operator.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import javax.net.ssl.SSLContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/** The test's own view of the broker, through its HTTP API only (with a bearer token when the broker needs one). */
public final class BrokerApi {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final URI url;
    private final String token;
    private final HttpClient http;

    public BrokerApi(URI url) {
        this(url, null);
    }

    public BrokerApi(URI url, String token) {
        this(url, token, HTTP);
    }

    /** For a broker over https: {@code trust} is a client context that trusts its certificate. */
    public BrokerApi(URI url, String token, SSLContext trust) {
        this(url, token, HttpClient.newBuilder().sslContext(trust).build());
    }

    private BrokerApi(URI url, String token, HttpClient http) {
        this.url = url;
        this.token = token;
        this.http = http;
    }

    /** The queue as {@code GET /api/v1/resources/queues/:name} shows it, or empty on a 404. */
    public Optional<JsonNode> queue(String tenant, String name) throws Exception {
        HttpResponse<String> r = send("GET", "/api/v1/resources/queues/" + name, tenant, null);
        if (r.statusCode() == 404) {
            return Optional.empty();
        }
        if (r.statusCode() != 200) {
            throw new AssertionError("GET queue " + name + ": " + r.statusCode() + " " + r.body());
        }
        return Optional.of(JSON.readTree(r.body()));
    }

    public HttpResponse<String> send(String method, String path, String tenant, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(url.resolve(path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (tenant != null) {
            request.header("x-queen-tenant", tenant);
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
