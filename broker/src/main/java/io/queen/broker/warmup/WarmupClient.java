package io.queen.broker.warmup;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The warm-up's HTTP client to the broker's own listener. The first failure is kept and ends the
 * whole warm-up: every phase and worker checks {@link #failed()} before its next request.
 */
final class WarmupClient implements AutoCloseable {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final ListenerAccess access;
    private final HttpClient http;
    private final AtomicReference<String> failure = new AtomicReference<>();

    WarmupClient(ListenerAccess access) {
        this.access = access;
        HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5));
        if (access.sslContext() != null) {
            builder.sslContext(access.sslContext());
        }
        this.http = builder.build();
    }

    boolean failed() {
        return failure.get() != null;
    }

    String failure() {
        return failure.get();
    }

    /** Records {@code why} as the warm-up's failure unless one was recorded already. */
    void fail(String why) {
        failure.compareAndSet(null, why);
    }

    /** The answer's body on {@code expected}, null on 204 or on a failure (recorded; it stops the warm-up). */
    String send(String method, String path, String body, int expected) {
        HttpRequest.Builder b = request(path).header("content-type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        try {
            HttpResponse<String> res = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (res.statusCode() == expected) {
                return res.body();
            }
            if (res.statusCode() != 204) {
                fail(method + " " + withoutQuery(path) + " answered " + res.statusCode());
            }
            return null;
        } catch (IOException e) {
            fail(method + " " + withoutQuery(path) + ": " + e);
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
            return null;
        }
    }

    /** Deletes {@code queue}; absent is fine, anything else but a 2xx throws. */
    void deleteQueue(String queue) throws IOException, InterruptedException {
        HttpRequest req = request("/api/v1/resources/queues/" + queue).DELETE().build();
        int status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 != 2 && status != 404) {
            throw new IOException("DELETE of warm-up queue " + queue + " answered " + status);
        }
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(access.base().resolve(path)).timeout(REQUEST_TIMEOUT);
        if (access.authorization() != null) {
            b.header("authorization", access.authorization());
        }
        return b;
    }

    private static String withoutQuery(String path) {
        return path.replaceFirst("\\?.*", "");
    }

    @Override
    public void close() {
        http.close();
    }
}
