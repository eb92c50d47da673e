package io.queen.broker.warmup;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up's HTTP/1.1 client against a scripted server on a real socket: each accepted
 * connection reads requests and writes the next scripted answer (or closes, for a null one), so
 * the framing and the connection reuse are checked byte for byte. The broker's own listener is
 * exercised through it by {@code SelfWarmupIT} and {@code SelfWarmupAccessIT}.
 */
class LoopbackHttpTest {
    private static final String CLOSE = "<close>";

    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final List<String> requests = new ArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private ServerSocket server;
    private Thread acceptor;

    private LoopbackHttp start() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    connections.incrementAndGet();
                    Thread.ofPlatform().daemon().start(() -> serve(s));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return new LoopbackHttp(URI.create("http://127.0.0.1:" + server.getLocalPort()), null, 5_000);
    }

    private void serve(Socket s) {
        try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1))) {
            OutputStream out = s.getOutputStream();
            while (true) {
                String requestLine = in.readLine();
                if (requestLine == null) {
                    return;
                }
                int length = 0;
                StringBuilder headers = new StringBuilder();
                for (String h = in.readLine(); h != null && !h.isEmpty(); h = in.readLine()) {
                    headers.append(h.toLowerCase()).append('\n');
                    if (h.toLowerCase().startsWith("content-length:")) {
                        length = Integer.parseInt(h.substring(15).trim());
                    }
                }
                char[] body = new char[length];
                int read = 0;
                while (read < length) {
                    read += in.read(body, read, length - read);
                }
                synchronized (requests) {
                    requests.add(requestLine + "\n" + headers + new String(body));
                }
                String answer = answers.poll(5, TimeUnit.SECONDS);
                if (answer == null || answer.equals(CLOSE)) {
                    return;
                }
                out.write(answer.getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the test ended or closed the connection
        }
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void answersFramedByLengthShareOneConnectionAndCarryTheRequestAsSent() throws Exception {
        try (LoopbackHttp http = start()) {
            answers.add("HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":\"é\"}");
            answers.add("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]");
            LoopbackHttp.Response first = http.send("POST", "/api/v1/push?x=1", "{\"n\":\"é\"}", "Bearer t");
            LoopbackHttp.Response second = http.send("GET", "/api/v1/pop/queue/q?batch=10", null, null);
            assertEquals(201, first.status());
            assertEquals("{\"ok\":\"é\"}", first.body());
            assertEquals(200, second.status());
            assertEquals("[]", second.body());
            assertEquals(1, connections.get(), "the second request reuses the first connection");
            String push = requests.get(0);
            assertTrue(push.startsWith("POST /api/v1/push?x=1 HTTP/1.1\n"), push);
            assertTrue(push.contains("authorization: bearer t\n"), push);
            assertTrue(push.contains("content-length: 10\n"), "UTF-8 bytes, not chars: " + push);
            assertTrue(push.contains("host: 127.0.0.1:" + server.getLocalPort() + "\n"), push);
            assertTrue(requests.get(1).startsWith("GET /api/v1/pop/queue/q?batch=10 HTTP/1.1\n"));
        }
    }

    @Test
    void chunkedAnswersAndEmptyOnesAreReadWhole() throws Exception {
        try (LoopbackHttp http = start()) {
            answers.add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n");
            answers.add("HTTP/1.1 204 No Content\r\n\r\n");
            answers.add("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\ndone");
            assertEquals("{\"a\":1}", http.send("GET", "/a", null, null).body());
            LoopbackHttp.Response empty = http.send("GET", "/b", null, null);
            assertEquals(204, empty.status());
            assertEquals("", empty.body());
            assertEquals("done", http.send("GET", "/c", null, null).body(), "the connection stays in step");
            assertEquals(1, connections.get());
        }
    }

    @Test
    void connectionCloseAndAnIdleConnectionTheServerDroppedBothLeadToANewConnection() throws Exception {
        try (LoopbackHttp http = start()) {
            answers.add("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\na");
            assertEquals("a", http.send("GET", "/1", null, null).body());
            answers.add("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb");
            assertEquals("b", http.send("GET", "/2", null, null).body());
            assertEquals(2, connections.get(), "a closed connection is not reused");

            answers.add(CLOSE); // the server drops the kept-alive connection instead of answering
            answers.add("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nc");
            assertEquals("c", http.send("POST", "/3", "{}", null).body());
            assertEquals(3, connections.get(), "sent once more on a new connection");
            assertEquals(4, requests.size());
        }
    }

    @Test
    void aFreshConnectionClosedUnansweredAndAMalformedAnswerAreErrors() throws Exception {
        try (LoopbackHttp http = start()) {
            answers.add(CLOSE);
            assertThrows(IOException.class, () -> http.send("GET", "/x", null, null));
            answers.add("SMTP ready\r\n\r\n");
            IOException e = assertThrows(IOException.class, () -> http.send("GET", "/y", null, null));
            assertTrue(e.getMessage().contains("not an HTTP/1.x answer"), e.getMessage());
        }
    }
}
