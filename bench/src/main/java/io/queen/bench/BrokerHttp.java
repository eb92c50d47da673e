package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The three broker routes the benchmark drives (push, pop, batch ack) plus /health, over
 * keep-alive HTTP/1.1 connections ({@link Http1Connection}) pooled across the client threads.
 */
final class BrokerHttp implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final int REQUEST_TIMEOUT_MS = 60_000;

    private final URI base;
    /** Sent as {@code Authorization} on every request, or null. */
    private final String authorization;
    private final ConcurrentLinkedDeque<Http1Connection> idle = new ConcurrentLinkedDeque<>();
    private final AtomicLong serverErrors = new AtomicLong();

    BrokerHttp(URI base) {
        this(base, null);
    }

    /** Every request carries {@code Authorization: <authorization>} (null: none). */
    BrokerHttp(URI base, String authorization) {
        this.base = base;
        this.authorization = authorization;
    }

    /**
     * {@code POST /api/v1/push} of {@code items} items; returns null when every item was queued,
     * else the per-item result array. The common answer is only scanned, not parsed: a tree of
     * 100 results per request was a quarter of the client's CPU in the push phase.
     */
    JsonNode pushExpectingQueued(byte[] body, int items) throws IOException {
        Http1Connection.Response res = exchange("POST", "/api/v1/push", body, REQUEST_TIMEOUT_MS);
        if (res.status() == 201 && count(res.body(), QUEUED) == items) {
            return null;
        }
        return parse("POST", "/api/v1/push", res, 201);
    }

    private static final byte[] QUEUED = "\"status\":\"queued\"".getBytes(StandardCharsets.US_ASCII);

    /** Occurrences of {@code needle} in {@code haystack}. */
    static int count(byte[] haystack, byte[] needle) {
        int n = 0;
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            n++;
            i += needle.length - 1;
        }
        return n;
    }

    /**
     * {@code GET /api/v1/pop/queue/<queue>} as a long-poll, from up to {@code partitions} partitions
     * (the broker's default of 1 is not sent); returns the response, or null on 204
     * (nothing arrived within {@code timeoutMs}).
     */
    JsonNode pop(String queue, int batch, int partitions, int timeoutMs) throws IOException {
        String path = "/api/v1/pop/queue/" + queue + "?batch=" + batch + "&wait=true&timeout=" + timeoutMs
                + (partitions == 1 ? "" : "&partitions=" + partitions);
        Http1Connection.Response res = exchange("GET", path, null, timeoutMs + 30_000);
        if (res.status() == 204) {
            return null;
        }
        return parse("GET", path, res, 200);
    }

    /**
     * {@code GET /api/v1/pop/queue/<queue>?wait=false}; returns whether it answered 204 (nothing to
     * deliver). Anything else but 200 is an error.
     */
    boolean popFindsNothing(String queue, int batch) throws IOException {
        String path = "/api/v1/pop/queue/" + queue + "?batch=" + batch + "&wait=false";
        Http1Connection.Response res = exchange("GET", path, null, REQUEST_TIMEOUT_MS);
        if (res.status() == 204) {
            return true;
        }
        parse("GET", path, res, 200);
        return false;
    }

    /** {@code POST /api/v1/ack/batch}; returns the per-item result array. */
    JsonNode ackBatch(String body) throws IOException {
        return post("/api/v1/ack/batch", body, 200);
    }

    /** Any route: {@code method path} with a JSON body (null: none), its status and body as answered. */
    Http1Connection.Response call(String method, String path, byte[] body, int timeoutMs) throws IOException {
        return exchange(method, path, body, timeoutMs);
    }

    /** {@code POST path} of a JSON body, parsed; another status than {@code expectedStatus} is an IOException. */
    JsonNode postJson(String path, String body, int expectedStatus) throws IOException {
        return post(path, body, expectedStatus);
    }

    /** Answers with a 5xx status so far, over every route called through this client. */
    long serverErrors() {
        return serverErrors.get();
    }

    /** The broker's heap in use ({@code GET /metrics}, memory.heapUsed) in bytes; -1 when it has none. */
    long heapUsedBytes() throws IOException {
        return parse("GET", "/metrics", exchange("GET", "/metrics", null, REQUEST_TIMEOUT_MS), 200)
                .path("memory").path("heapUsed").asLong(-1);
    }

    boolean healthy() {
        try {
            return exchange("GET", "/health", null, 5_000).status() == 200;
        } catch (IOException e) {
            return false; // not listening yet
        }
    }

    /** {@code GET /ready}: true on 200 (warmed up and the database answers), false otherwise. */
    /** GET /ready answered 200; its 503 while the broker warms up is the answer asked for, not a server error. */
    boolean ready() {
        try {
            return exchange("GET", "/ready", null, 5_000, false).status() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    private JsonNode post(String path, String body, int expectedStatus) throws IOException {
        return parse("POST", path, exchange("POST", path, body.getBytes(StandardCharsets.UTF_8), REQUEST_TIMEOUT_MS),
                expectedStatus);
    }

    private Http1Connection.Response exchange(String method, String path, byte[] body, int timeoutMs)
            throws IOException {
        return exchange(method, path, body, timeoutMs, true);
    }

    private Http1Connection.Response exchange(String method, String path, byte[] body, int timeoutMs,
                                              boolean countServerErrors) throws IOException {
        Http1Connection c = idle.pollFirst();
        if (c == null) {
            c = new Http1Connection(base, authorization);
        }
        try {
            Http1Connection.Response res = c.exchange(method, path, body, timeoutMs);
            if (res.status() >= 500 && countServerErrors) {
                serverErrors.incrementAndGet();
            }
            return res;
        } finally {
            idle.addFirst(c); // A failed connection closed itself and reconnects on its next use.
        }
    }

    private static JsonNode parse(String method, String path, Http1Connection.Response res, int expectedStatus)
            throws IOException {
        if (res.status() != expectedStatus) {
            String text = new String(res.body(), StandardCharsets.UTF_8);
            throw new IOException(method + " " + path + " answered " + res.status() + ": "
                    + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
        }
        return JSON.readTree(res.body());
    }

    /** Closes every pooled connection. */
    @Override
    public void close() {
        for (Http1Connection c; (c = idle.pollFirst()) != null; ) {
            c.close();
        }
    }
}
