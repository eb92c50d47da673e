package io.queen.broker.support;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** A JWKS endpoint on loopback that a test rotates, breaks and counts. */
public final class JwksServer implements AutoCloseable {
    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();
    private volatile String document = "{\"keys\":[]}";
    private volatile int status = 200;

    public JwksServer() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/jwks", exchange -> {
            requests.incrementAndGet();
            byte[] body = (status == 200 ? document : "{\"error\":\"down\"}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks");
    }

    /** What the endpoint serves from now on. */
    public void serve(String jwksDocument) {
        this.document = jwksDocument;
        this.status = 200;
    }

    /** From now on the endpoint answers 503, as an identity provider that is down. */
    public void down() {
        this.status = 503;
    }

    public int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
