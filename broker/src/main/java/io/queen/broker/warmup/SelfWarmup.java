package io.queen.broker.warmup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.WarmupSettings;
import io.queen.broker.engine.auth.Authenticator;
import io.queen.broker.lifecycle.BackgroundThread;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;

/**
 * Pushes and consumes messages through the broker's own listener before it reports ready
 * ({@code GET /ready}), so that the JIT has compiled the hot paths (HTTP, JSON, packing and
 * compression, the driver, the SQL functions' plans) before a Service sends it traffic. A fresh JVM
 * pushes at a third of its warm rate for its first seconds; in Kubernetes every rolling restart
 * and scale-up is such a JVM, with traffic flowing (broker/DESIGN.md, Memory and start-up).
 *
 * <p>The traffic is the shape clients send: pushes of 100 items with transactionIds, long-poll pops
 * of 100 from several partitions, batch acks. It goes to a queue of its own named after the host
 * and port ({@code queen-warmup-<host>-<port>}), so a pod of a StatefulSet reuses and removes the
 * queue a crash left behind; the queue is deleted at the end. A failure stops the warm-up and the
 * broker becomes ready anyway: readiness must not depend on it.
 */
public final class SelfWarmup implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SelfWarmup.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int PRODUCERS = 2;
    /** Two: one consumer finished its pops and acks seconds after the producers (bench --cold). */
    private static final int CONSUMERS = 2;
    private static final int BATCH = 100;
    private static final int PARTITIONS = 10;
    private static final int PAYLOAD_PAD = 200;
    private static final long PROGRESS_NANOS = 2_000_000_000L;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final WarmupSettings settings;
    private final ListenerAccess access;
    private final String queue;
    /** Holds the pass the warm-up sends with authentication on (revoked when it ends), else null. */
    private final Authenticator authenticator;
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicBoolean ready = new AtomicBoolean();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong nextRequest = new AtomicLong();
    private final AtomicLong pushed = new AtomicLong();
    private final AtomicLong consumed = new AtomicLong();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final Thread thread;
    private HttpClient http;

    private SelfWarmup(WarmupSettings settings, ListenerAccess access, String queue, Authenticator authenticator) {
        this.settings = settings;
        this.access = access;
        this.queue = queue;
        this.authenticator = authenticator;
        this.thread = BackgroundThread.create("queen-warmup", this::runGuarded);
    }

    /** A broker that is ready at once (no warm-up configured, or it cannot run: {@code why}). */
    public static SelfWarmup skipped(String why) {
        SelfWarmup w = new SelfWarmup(WarmupSettings.none(), null, null, null);
        if (why != null) {
            LOG.info("warm-up skipped: " + why + "; ready at once");
        }
        w.ready.set(true);
        return w;
    }

    /**
     * Starts the warm-up against the listener at {@code bindAddress:port}; ready once it ends. On
     * an HTTPS listener ({@code servedCertificate} not null) it trusts exactly that certificate;
     * with authentication on ({@code authenticator} not null) it sends the authenticator's warm-up
     * pass, whatever keys client tokens are verified with, and revokes it when it ends.
     */
    public static SelfWarmup start(WarmupSettings settings, Authenticator authenticator,
                                   X509Certificate servedCertificate, String bindAddress, int port) {
        if (!settings.enabled()) {
            return skipped(null);
        }
        ListenerAccess access = ListenerAccess.to(bindAddress, port);
        if (servedCertificate != null) {
            try {
                access = access.overTls(servedCertificate);
            } catch (GeneralSecurityException e) {
                return skipped("no TLS client for the listener's own certificate (" + e.getMessage() + ")");
            }
        }
        if (authenticator != null) {
            access = access.withBearer(authenticator.issueWarmupPass());
        }
        SelfWarmup w = new SelfWarmup(settings, access, queueName(port), authenticator);
        w.thread.start();
        return w;
    }

    /** True once the warm-up ended (or was never to run). */
    public boolean ready() {
        return ready.get();
    }

    static String queueName(int port) {
        String host = System.getenv().getOrDefault("HOSTNAME", "");
        String clean = host.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (clean.length() > 63) {
            clean = clean.substring(0, 63);
        }
        return "queen-warmup-" + (clean.isEmpty() ? "broker" : clean) + "-" + port;
    }

    private void runGuarded() {
        long start = System.nanoTime();
        HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5));
        if (access.sslContext() != null) {
            builder.sslContext(access.sslContext());
        }
        try (HttpClient client = builder.build()) {
            http = client;
            deleteQueue(); // a crash may have left it behind
            LOG.info(String.format("warm-up: pushing and consuming %,d messages on queue %s before reporting ready "
                    + "(QUEEN_WARMUP_MESSAGES; at most %d s)", settings.messages(), queue, settings.maxSeconds()));
            long deadline = start + settings.maxSeconds() * 1_000_000_000L;
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < PRODUCERS; i++) {
                workers.add(BackgroundThread.start("queen-warmup-push-" + i, () -> produce(deadline)));
            }
            for (int i = 0; i < CONSUMERS; i++) {
                workers.add(BackgroundThread.start("queen-warmup-consume-" + i, () -> consume(deadline)));
            }
            long nextReport = start + PROGRESS_NANOS;
            for (Thread t : workers) {
                while (t.isAlive()) {
                    t.join(200);
                    if (System.nanoTime() >= nextReport) {
                        nextReport += PROGRESS_NANOS;
                        LOG.info(String.format("warm-up: %,d of %,d messages pushed, %,d consumed, %.1f s",
                                pushed.get(), settings.messages(), consumed.get(), (System.nanoTime() - start) / 1e9));
                    }
                }
            }
            deleteQueue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, "interrupted");
        } catch (IOException | RuntimeException e) {
            failure.compareAndSet(null, e.toString());
        } finally {
            if (authenticator != null) {
                authenticator.revokeWarmupPass();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            String outcome = String.format("%,d messages pushed and %,d consumed in %.1f s", pushed.get(),
                    consumed.get(), seconds);
            if (failure.get() != null) {
                LOG.warning("warm-up stopped (" + failure.get() + ") after " + outcome + "; ready anyway");
            } else {
                LOG.info("warm-up done: " + outcome + "; ready");
            }
            ready.set(true);
        }
    }

    private boolean going(long deadline) {
        return !stop.get() && failure.get() == null && System.nanoTime() < deadline;
    }

    private void produce(long deadline) {
        StringBuilder body = new StringBuilder();
        String pad = "x".repeat(PAYLOAD_PAD);
        long requests = (settings.messages() + BATCH - 1) / BATCH;
        for (long k; going(deadline) && (k = nextRequest.getAndIncrement()) < requests; ) {
            body.setLength(0);
            body.append("{\"items\":[");
            for (int i = 0; i < BATCH; i++) {
                if (i > 0) {
                    body.append(',');
                }
                body.append("{\"queue\":\"").append(queue).append("\",\"partition\":\"p").append(k % PARTITIONS)
                    .append("\",\"transactionId\":\"warmup-").append(run).append('-').append(k).append('-').append(i)
                    .append("\",\"payload\":{\"n\":").append(i).append(",\"pad\":\"").append(pad).append("\"}}");
            }
            body.append("]}");
            String answer = send("POST", "/api/v1/push", body.toString(), 201);
            if (answer != null && answer.contains("\"buffered\"")) {
                // Spooled, not stored: the database is unavailable (or in maintenance), and a replay
                // after the end would bring back the queue deleted meanwhile.
                failure.compareAndSet(null, "pushes are spooled, the database is unavailable");
            } else if (answer != null) {
                pushed.addAndGet(BATCH);
            }
        }
    }

    private void consume(long deadline) {
        StringBuilder ack = new StringBuilder();
        String pop = "/api/v1/pop/queue/" + queue + "?batch=" + BATCH + "&partitions=" + PARTITIONS
                + "&wait=true&timeout=500";
        // Until everything pushed is consumed: the producers stop first, by count or by the deadline.
        while (failure.get() == null && !stop.get()
                && (consumed.get() < pushed.get() || nextRequest.get() * BATCH < settings.messages() && going(deadline))) {
            String res = send("GET", pop, null, 200);
            if (res == null) {
                continue; // 204: nothing yet, or a failure that stops the loop
            }
            JsonNode messages;
            try {
                messages = JSON.readTree(res).path("messages");
            } catch (IOException e) {
                failure.compareAndSet(null, "unreadable pop answer: " + e.getMessage());
                return;
            }
            ack.setLength(0);
            ack.append("{\"acknowledgments\":[");
            for (int i = 0; i < messages.size(); i++) {
                JsonNode m = messages.get(i);
                ack.append(i > 0 ? "," : "").append("{\"transactionId\":\"").append(m.path("transactionId").asText())
                   .append("\",\"partitionId\":\"").append(m.path("partitionId").asText())
                   .append("\",\"leaseId\":\"").append(m.path("leaseId").asText())
                   .append("\",\"status\":\"completed\"}");
            }
            ack.append("]}");
            if (messages.size() > 0 && send("POST", "/api/v1/ack/batch", ack.toString(), 200) != null) {
                consumed.addAndGet(messages.size());
            }
            if (System.nanoTime() > deadline + 5_000_000_000L) {
                return; // the deadline passed long ago: what is left is deleted with the queue
            }
        }
    }

    /** The answer's body on {@code expected}, null on 204 or on a failure (recorded; it stops the warm-up). */
    private String send(String method, String path, String body, int expected) {
        HttpRequest.Builder b = request(path).header("content-type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        try {
            HttpResponse<String> res = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (res.statusCode() == expected) {
                return res.body();
            }
            if (res.statusCode() != 204) {
                failure.compareAndSet(null, method + " " + path.replaceFirst("\\?.*", "") + " answered " + res.statusCode());
            }
            return null;
        } catch (IOException e) {
            failure.compareAndSet(null, method + " " + path.replaceFirst("\\?.*", "") + ": " + e);
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, "interrupted");
            return null;
        }
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(access.base().resolve(path)).timeout(REQUEST_TIMEOUT);
        if (access.authorization() != null) {
            b.header("authorization", access.authorization());
        }
        return b;
    }

    private void deleteQueue() throws IOException, InterruptedException {
        HttpRequest req = request("/api/v1/resources/queues/" + queue).DELETE().build();
        int status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 != 2 && status != 404) {
            throw new IOException("DELETE of warm-up queue " + queue + " answered " + status);
        }
    }

    /** Stops a warm-up still running (the broker is closing). */
    @Override
    public void close() {
        stop.set(true);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
