package io.queen.bench;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The benchmark's HTTP/1.1 client against the JDK's own HTTP server, over real sockets. */
class Http1ConnectionTest {
    private HttpServer server;
    private URI base;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/echo", ex -> {
            byte[] body = ex.getRequestBody().readAllBytes();
            ex.getResponseHeaders().add("X-Method", ex.getRequestMethod());
            ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/chunked", ex -> {
            ex.sendResponseHeaders(201, 0); // length 0: the JDK server answers chunked
            try (OutputStream out = ex.getResponseBody()) {
                for (int i = 0; i < 3; i++) {
                    out.write(("part" + i + ";").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            }
        });
        server.createContext("/empty", ex -> {
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        server.createContext("/close", ex -> {
            byte[] body = "bye".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Connection", "close");
            ex.sendResponseHeaders(500, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void aKeptAliveConnectionCarriesBodiesBothWays() throws IOException {
        try (Http1Connection c = new Http1Connection(base)) {
            byte[] big = "x".repeat(200_000).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 3; i++) {
                Http1Connection.Response r = c.exchange("POST", "/echo", big, 5_000);
                assertEquals(200, r.status());
                assertArrayEquals(big, r.body());
            }
            Http1Connection.Response get = c.exchange("GET", "/echo?q=1", null, 5_000);
            assertEquals(200, get.status());
            assertEquals(0, get.body().length);
        }
    }

    @Test
    void chunkedAndEmptyAnswersAreRead() throws IOException {
        try (Http1Connection c = new Http1Connection(base)) {
            Http1Connection.Response chunked = c.exchange("GET", "/chunked", null, 5_000);
            assertEquals(201, chunked.status());
            assertEquals("part0;part1;part2;", new String(chunked.body(), StandardCharsets.UTF_8));
            assertEquals(204, c.exchange("GET", "/empty", null, 5_000).status());
            // The connection is still usable after both.
            assertEquals(200, c.exchange("POST", "/echo", "{}".getBytes(StandardCharsets.UTF_8), 5_000).status());
        }
    }

    @Test
    void aClosedConnectionIsReopenedAndAnUnreachableBrokerIsAnIoError() throws IOException {
        try (Http1Connection c = new Http1Connection(base)) {
            Http1Connection.Response r = c.exchange("GET", "/close", null, 5_000);
            assertEquals(500, r.status());
            assertEquals("bye", new String(r.body(), StandardCharsets.UTF_8));
            assertEquals(200, c.exchange("POST", "/echo", "1".getBytes(StandardCharsets.UTF_8), 5_000).status());
        }
        server.stop(0);
        try (Http1Connection c = new Http1Connection(base)) {
            assertThrows(IOException.class, () -> c.exchange("GET", "/echo", null, 2_000));
        }
    }
}
