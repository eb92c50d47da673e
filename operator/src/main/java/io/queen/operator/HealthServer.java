package io.queen.operator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The operator's own probes and metrics on one small HTTP port: {@code /healthz} (liveness),
 * {@code /readyz} (readiness) and {@code /metrics} (Prometheus text format).
 */
public final class HealthServer implements AutoCloseable {
    private final HttpServer server;

    private HealthServer(HttpServer server) {
        this.server = server;
    }

    public static HealthServer start(int port, BooleanSupplier alive, BooleanSupplier ready,
                                     PrometheusMeterRegistry metrics) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
        server.createContext("/healthz", exchange -> probe(exchange, alive));
        server.createContext("/readyz", exchange -> probe(exchange, ready));
        server.createContext("/metrics", exchange -> respond(exchange, 200, "text/plain; version=0.0.4; charset=utf-8",
                metrics.scrape()));
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "queen-operator-http");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return new HealthServer(server);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void probe(HttpExchange exchange, BooleanSupplier check) throws IOException {
        boolean ok;
        try {
            ok = check.getAsBoolean();
        } catch (RuntimeException e) {
            ok = false;
        }
        respond(exchange, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok\n" : "not ok\n");
    }

    private static void respond(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
