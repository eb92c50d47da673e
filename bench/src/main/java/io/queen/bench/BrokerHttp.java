package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The three broker routes the benchmark drives (push, pop, batch ack) plus /health, over HTTP/1.1. */
final class BrokerHttp {
    static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final URI base;

    BrokerHttp(URI base) {
        this.base = base;
    }

    /** {@code POST /api/v1/push}; returns the per-item result array. */
    JsonNode push(String body) throws IOException, InterruptedException {
        return post("/api/v1/push", body, 201);
    }

    /**
     * {@code GET /api/v1/pop/queue/<queue>} as a long-poll, from up to {@code partitions} partitions
     * (the broker's default of 1 is not sent); returns the response, or null on 204
     * (nothing arrived within {@code timeoutMs}).
     */
    JsonNode pop(String queue, int batch, int partitions, int timeoutMs) throws IOException, InterruptedException {
        URI uri = base.resolve("/api/v1/pop/queue/" + queue + "?batch=" + batch + "&wait=true&timeout=" + timeoutMs
                + (partitions == 1 ? "" : "&partitions=" + partitions));
        HttpRequest req = HttpRequest.newBuilder(uri).GET().timeout(Duration.ofMillis(timeoutMs + 30_000L)).build();
        HttpResponse<byte[]> res = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        if (res.statusCode() == 204) {
            return null;
        }
        return parse(res, 200);
    }

    /** {@code POST /api/v1/ack/batch}; returns the per-item result array. */
    JsonNode ackBatch(String body) throws IOException, InterruptedException {
        return post("/api/v1/ack/batch", body, 200);
    }

    boolean healthy() throws InterruptedException {
        try {
            HttpRequest req = HttpRequest.newBuilder(base.resolve("/health")).timeout(Duration.ofSeconds(5)).build();
            return client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false; // not listening yet
        }
    }

    private JsonNode post(String path, String body, int expectedStatus) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(base.resolve(path))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return parse(client.send(req, HttpResponse.BodyHandlers.ofByteArray()), expectedStatus);
    }

    private static JsonNode parse(HttpResponse<byte[]> res, int expectedStatus) throws IOException {
        if (res.statusCode() != expectedStatus) {
            String text = new String(res.body(), java.nio.charset.StandardCharsets.UTF_8);
            throw new IOException(res.request().method() + " " + res.request().uri().getPath() + " answered "
                    + res.statusCode() + ": " + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
        }
        return JSON.readTree(res.body());
    }
}
