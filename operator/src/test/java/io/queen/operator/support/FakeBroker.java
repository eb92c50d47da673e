package io.queen.operator.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;

/**
 * An in-memory stand-in for the broker's admin routes (configure, queue read and delete, tenant
 * purge) with the reference's defaults, for controller tests that need to drive HTTP errors. The
 * real broker is exercised by the *IT tests.
 */
public final class FakeBroker implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
    private static final Map<String, Object> DEFAULTS = Map.ofEntries(
            Map.entry("leaseTime", 300), Map.entry("retryLimit", 3), Map.entry("retryDelay", 1000),
            Map.entry("priority", 0), Map.entry("maxSize", 0), Map.entry("ttl", 3600),
            Map.entry("deadLetterQueue", true), Map.entry("dlqAfterMaxRetries", true), Map.entry("delayedProcessing", 0),
            Map.entry("windowBuffer", 0), Map.entry("retentionEnabled", false), Map.entry("retentionSeconds", 0),
            Map.entry("completedRetentionSeconds", 0), Map.entry("maxWaitTimeSeconds", 0),
            Map.entry("encryptionEnabled", false), Map.entry("minPopWaitTime", 0), Map.entry("dedupWindowSeconds", 3600),
            Map.entry("retentionSinkHold", ""), Map.entry("retentionSinkHoldMaxSeconds", 604800));

    /** One stored queue: labels, resolved options, pending messages. */
    public record StoredQueue(String namespace, String task, ObjectNode options, long pending) {
    }

    private final HttpServer server;
    /** Keyed by tenant + "/" + queue name. */
    private final Map<String, StoredQueue> queues = new ConcurrentHashMap<>();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private volatile int failWith;
    private volatile String failBody = "";
    private volatile boolean refuseSinkHold;

    public FakeBroker() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Every following call answers this status (0 to stop failing). */
    public void failWith(int status, String body) {
        this.failWith = status;
        this.failBody = body;
    }

    /** Configure refuses any queue whose options name retentionSinkHold, like the broker's 400 for a bad value. */
    public void refuseSinkHold() {
        this.refuseSinkHold = true;
    }

    public StoredQueue queue(String tenant, String name) {
        return queues.get((tenant == null ? DEFAULT_TENANT : tenant) + "/" + name);
    }

    public void putPending(String tenant, String name, long pending) {
        queues.computeIfPresent((tenant == null ? DEFAULT_TENANT : tenant) + "/" + name,
                (k, q) -> new StoredQueue(q.namespace(), q.task(), q.options(), pending));
    }

    /** Deletes a queue behind the operator's back. */
    public void dropQueue(String tenant, String name) {
        queues.remove((tenant == null ? DEFAULT_TENANT : tenant) + "/" + name);
    }

    public List<String> calls() {
        return calls;
    }

    private void handle(HttpExchange exchange) throws IOException {
        String tenant = exchange.getRequestHeaders().getFirst("x-queen-tenant");
        tenant = tenant == null ? DEFAULT_TENANT : tenant;
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        calls.add(method + " " + path);
        if (failWith != 0) {
            send(exchange, failWith, failBody);
            return;
        }
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String queuePrefix = "/api/v1/resources/queues/";
        if (method.equals("POST") && path.equals("/api/v1/configure")) {
            configure(exchange, tenant, (ObjectNode) JSON.readTree(body));
        } else if (path.startsWith(queuePrefix)) {
            String name = URLDecoder.decode(path.substring(queuePrefix.length()), StandardCharsets.UTF_8);
            StoredQueue q = queues.get(tenant + "/" + name);
            if (method.equals("GET")) {
                if (q == null) {
                    send(exchange, 404, "{\"error\":\"Queue not found\"}");
                } else {
                    ObjectNode answer = JSON.createObjectNode().put("name", name).put("namespace", q.namespace()).put("task", q.task());
                    answer.putObject("totals").put("pending", q.pending());
                    send(exchange, 200, answer.toString());
                }
            } else {
                queues.remove(tenant + "/" + name);
                send(exchange, 200, "{\"deleted\":" + (q != null) + ",\"queue\":\"" + name + "\",\"existed\":" + (q != null) + "}");
            }
        } else if (method.equals("POST") && path.startsWith("/api/v1/system/tenants/") && path.endsWith("/purge")) {
            String purged = path.substring("/api/v1/system/tenants/".length(), path.length() - "/purge".length());
            // One queue per step, so a purge takes several steps.
            String victim = queues.keySet().stream().filter(k -> k.startsWith(purged + "/")).findFirst().orElse(null);
            if (victim != null) {
                queues.remove(victim);
            }
            long remaining = queues.keySet().stream().filter(k -> k.startsWith(purged + "/")).count();
            boolean done = victim == null;
            send(exchange, 200, "{\"tenant\":\"" + purged + "\",\"done\":" + done + ",\"phase\":\"" + (done ? "complete" : "queues")
                    + "\",\"queues\":{\"deleted\":" + (victim == null ? 0 : 1) + ",\"remaining\":" + remaining + "},\"rows\":{}}");
        } else {
            send(exchange, 404, "{\"error\":\"Not Found\",\"code\":\"no_such_route\"}");
        }
    }

    private void configure(HttpExchange exchange, String tenant, ObjectNode body) throws IOException {
        ObjectNode requested = body.path("options").isObject() ? (ObjectNode) body.get("options") : JSON.createObjectNode();
        if (refuseSinkHold && requested.has("retentionSinkHold")) {
            send(exchange, 400, "{\"error\":\"retentionSinkHold refused by this broker\",\"invalid\":\"retentionSinkHold\"}");
            return;
        }
        ObjectNode options = JSON.valueToTree(DEFAULTS);
        for (Iterator<Map.Entry<String, JsonNode>> it = requested.fields(); it.hasNext(); ) {
            var e = it.next();
            options.set(e.getKey(), e.getValue());
        }
        String name = body.path("queue").asText();
        StoredQueue previous = queues.get(tenant + "/" + name);
        queues.put(tenant + "/" + name, new StoredQueue(body.path("namespace").asText(""), body.path("task").asText(""),
                options, previous == null ? 0 : previous.pending()));
        ObjectNode answer = JSON.createObjectNode().put("configured", true).put("queue", name);
        answer.set("options", options);
        send(exchange, 200, answer.toString());
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
