package io.queen.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The broker's HTTP API as a client sees it through the Service: only what the scenarios need. */
final class BrokerApi {
    static final String TENANT_HEADER = "x-queen-tenant";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    BrokerApi(URI base) {
        this.base = base;
    }

    /** {@code GET /api/v1/resources/queues/:queue}: the queue with its options and totals, empty on 404. */
    Optional<JsonNode> queue(String tenant, String queue) {
        HttpResponse<String> response = send(request("/api/v1/resources/queues/" + segment(queue), tenant).GET());
        if (response.statusCode() == 404) {
            return Optional.empty();
        }
        return Optional.of(parse(ok(response)));
    }

    /** {@code DELETE /api/v1/resources/queues/:queue}, behind the operator's back. */
    void deleteQueue(String tenant, String queue) {
        ok(send(request("/api/v1/resources/queues/" + segment(queue), tenant).DELETE()));
    }

    /** {@code POST /api/v1/configure} with mode replace, behind the operator's back. */
    void configure(String tenant, String queue, Map<String, Object> options) {
        ObjectNode body = JSON.createObjectNode().put("queue", queue).put("mode", "replace");
        body.set("options", JSON.valueToTree(options));
        ok(send(request("/api/v1/configure", tenant).POST(body(body)).header("Content-Type", "application/json")));
    }

    /**
     * {@code POST /api/v1/push} of one message per transaction id; returns each item's status
     * ({@code queued}, {@code duplicate}, {@code buffered}, {@code failed}). Throws on a transport error.
     */
    List<String> push(String tenant, String queue, List<String> transactionIds) {
        ArrayNode items = JSON.createArrayNode();
        for (String id : transactionIds) {
            items.addObject().put("queue", queue).put("transactionId", id).putObject("payload").put("id", id);
        }
        ObjectNode body = JSON.createObjectNode();
        body.set("items", items);
        JsonNode answer = parse(ok(send(request("/api/v1/push", tenant).POST(body(body))
                .header("Content-Type", "application/json"))));
        List<String> statuses = new ArrayList<>();
        answer.forEach(item -> statuses.add(item.path("status").asText()));
        return statuses;
    }

    /** One queue-mode pop with autoAck: the transaction ids delivered, empty when the broker answers 204. */
    List<String> popAndAck(String tenant, String queue, int batch) {
        HttpResponse<String> response = send(request("/api/v1/pop/queue/" + segment(queue) + "?batch=" + batch
                + "&autoAck=true", tenant).GET());
        if (response.statusCode() == 204) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        parse(ok(response)).path("messages").forEach(m -> ids.add(m.path("transactionId").asText()));
        return ids;
    }

    private HttpRequest.Builder request(String path, String tenant) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(15))
                .header("Accept", "application/json");
        if (tenant != null) {
            builder.header(TENANT_HEADER, tenant);
        }
        return builder;
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String ok(HttpResponse<String> response) {
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException(response.request().method() + " " + response.uri() + " answered "
                    + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    private static HttpRequest.BodyPublisher body(JsonNode json) {
        return HttpRequest.BodyPublishers.ofString(json.toString(), StandardCharsets.UTF_8);
    }

    private static JsonNode parse(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
