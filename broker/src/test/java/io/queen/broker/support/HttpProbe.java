package io.queen.broker.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client for tests: status plus body, body parsed as JSON on demand. */
public final class HttpProbe {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    public record Reply(int status, String body) {
        public JsonNode json() {
            try {
                return MAPPER.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON (" + status + "): " + body, e);
            }
        }
    }

    public HttpProbe(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    public Reply get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    public Reply post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    public Reply delete(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
    }

    /** Pushes raw JSON payloads to one partition and insists on the 201 the push route answers. */
    public Reply push(String queue, String partition, String... payloads) {
        StringBuilder items = new StringBuilder();
        for (String p : payloads) {
            if (!items.isEmpty()) {
                items.append(',');
            }
            items.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"").append(partition)
                    .append("\",\"payload\":").append(p).append('}');
        }
        Reply r = post("/api/v1/push", "{\"items\":[" + items + "]}");
        if (r.status() != 201) {
            throw new AssertionError("push answered " + r.status() + ": " + r.body());
        }
        return r;
    }

    /** Any method, with an optional JSON body and an optional x-queen-tenant header (null = none). */
    public Reply call(String tenant, String method, String path, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
                .header("Content-Type", "application/json");
        if (tenant != null) {
            b.header("x-queen-tenant", tenant);
        }
        return send(b);
    }

    /** Any method, an optional JSON body, and the headers given (an Authorization, a tenant...). */
    public Reply call(String method, String path, String json, java.util.Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
                .header("Content-Type", "application/json");
        headers.forEach(b::header);
        return send(b);
    }

    private Reply send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = client.send(request.timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new AssertionError("HTTP request failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
