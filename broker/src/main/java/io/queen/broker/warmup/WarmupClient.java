package io.queen.broker.warmup;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The warm-up's HTTP client to the broker's own listener. The first failure is kept and ends the
 * whole warm-up: every phase and worker checks {@link #failed()} before its next request.
 */
final class WarmupClient implements AutoCloseable {
    /** The longest wait for an answer's next bytes (the warm-up's long-polls are far shorter). */
    private static final int READ_TIMEOUT_MS = 30_000;

    private final ListenerAccess access;
    private final LoopbackHttp http;
    private final AtomicReference<String> failure = new AtomicReference<>();

    WarmupClient(ListenerAccess access) {
        this.access = access;
        this.http = new LoopbackHttp(access.base(), access.sslContext(), READ_TIMEOUT_MS);
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
        try {
            LoopbackHttp.Response res = http.send(method, path, body, access.authorization());
            if (res.status() == expected) {
                return res.body();
            }
            if (res.status() != 204) {
                fail(method + " " + withoutQuery(path) + " answered " + res.status());
            }
            return null;
        } catch (IOException e) {
            fail(method + " " + withoutQuery(path) + ": " + (Thread.currentThread().isInterrupted() ? "interrupted" : e));
            return null;
        }
    }

    /** Deletes {@code queue}; absent is fine, anything else but a 2xx throws. */
    void deleteQueue(String queue) throws IOException {
        int status = http.send("DELETE", "/api/v1/resources/queues/" + queue, null, access.authorization()).status();
        if (status / 100 != 2 && status != 404) {
            throw new IOException("DELETE of warm-up queue " + queue + " answered " + status);
        }
    }

    private static String withoutQuery(String path) {
        return path.replaceFirst("\\?.*", "");
    }

    @Override
    public void close() {
        http.close();
    }
}
