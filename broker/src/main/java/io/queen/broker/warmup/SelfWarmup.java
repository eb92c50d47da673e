package io.queen.broker.warmup;

import io.queen.broker.config.WarmupSettings;
import io.queen.broker.engine.auth.Authenticator;
import io.queen.broker.lifecycle.BackgroundThread;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;

/**
 * Pushes and consumes messages through the broker's own listener before it reports ready
 * ({@code GET /ready}), so that the JIT has compiled the hot paths (HTTP, JSON, packing and
 * compression, the driver, the SQL functions' plans) before a Service sends it traffic. A fresh JVM
 * pushes at a third of its warm rate for its first seconds; in Kubernetes every rolling restart
 * and scale-up is such a JVM, with traffic flowing (broker/DESIGN.md, Memory and start-up).
 *
 * <p>The traffic is the shape clients send, in two phases ({@link #shapes}): pushes with
 * transactionIds, of 100 items over 10 partitions and then of 10 over 100, long-poll pops of 100
 * from several partitions, batch acks. It goes to a queue of its own named after the host
 * and port ({@code queen-warmup-<host>-<port>}), so a pod of a StatefulSet reuses and removes the
 * queue a crash left behind; the queue is deleted at the end. A failure stops the warm-up and the
 * broker becomes ready anyway: readiness must not depend on it.
 */
public final class SelfWarmup implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SelfWarmup.class.getName());
    /** The share of the messages pushed in small requests (the second phase, {@link #shapes}). */
    private static final long SMALL_SHARE_PERCENT = 40;

    private final WarmupSettings settings;
    private final ListenerAccess access;
    private final String queue;
    /** Holds the pass the warm-up sends with authentication on (revoked when it ends), else null. */
    private final Authenticator authenticator;
    /** Runs once the warm-up's traffic is over, before /ready turns 200 (the process's heap trim). */
    private final Runnable beforeReady;
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicBoolean ready = new AtomicBoolean();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final Thread thread;

    private SelfWarmup(WarmupSettings settings, ListenerAccess access, String queue, Authenticator authenticator,
                       Runnable beforeReady) {
        this.settings = settings;
        this.access = access;
        this.queue = queue;
        this.authenticator = authenticator;
        this.beforeReady = beforeReady;
        this.thread = BackgroundThread.create("queen-warmup", this::runGuarded);
    }

    /** A broker that is ready at once (no warm-up configured, or it cannot run: {@code why}). */
    public static SelfWarmup skipped(String why) {
        SelfWarmup w = new SelfWarmup(WarmupSettings.none(), null, null, null, () -> { });
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
     * {@code beforeReady} runs when the warm-up ended, however it ended, before it reports ready.
     */
    public static SelfWarmup start(WarmupSettings settings, Authenticator authenticator,
                                   X509Certificate servedCertificate, String bindAddress, int port,
                                   Runnable beforeReady) {
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
        SelfWarmup w = new SelfWarmup(settings, access, queueName(port), authenticator, beforeReady);
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
        List<WarmupPhase> phases = new ArrayList<>();
        try (WarmupClient client = new WarmupClient(access)) {
            client.deleteQueue(queue); // a crash may have left it behind
            LOG.info(String.format("warm-up: pushing and consuming %,d messages on queue %s before reporting ready "
                    + "(QUEEN_WARMUP_MESSAGES; at most %d s)", settings.messages(), queue, settings.maxSeconds()));
            long deadline = start + settings.maxSeconds() * 1_000_000_000L;
            for (WarmupPhase.Shape shape : shapes(settings.messages())) {
                if (client.failed() || stop.get()) {
                    break;
                }
                WarmupPhase phase = new WarmupPhase(shape, client, queue, run, stop);
                phases.add(phase);
                phase.run(deadline);
            }
            client.deleteQueue(queue);
            failure.compareAndSet(null, client.failure());
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
            String outcome = String.format("%,d messages pushed and %,d consumed in %.1f s",
                    phases.stream().mapToLong(WarmupPhase::pushed).sum(),
                    phases.stream().mapToLong(WarmupPhase::consumed).sum(), seconds);
            if (failure.get() != null) {
                LOG.warning("warm-up stopped (" + failure.get() + ") after " + outcome + "; the broker gets ready anyway");
            } else {
                LOG.info("warm-up done: " + outcome);
            }
            try {
                beforeReady.run();
            } catch (RuntimeException e) {
                LOG.warning("after the warm-up: " + e);
            }
            LOG.info("ready");
            ready.set(true);
        }
    }

    /**
     * The phases {@code messages} are split into. Large pushes and pops first: they compile the
     * per-message paths (JSON, packing, the SQL batches) in few requests. Then small pushes over
     * many partitions: C2 compiles a method after thousands of calls, and the per-request paths
     * (HTTP, the driver's statement and result set, the pool) are called once a request, so a
     * warm-up of large requests alone left them to compile after readiness, under traffic.
     */
    static List<WarmupPhase.Shape> shapes(long messages) {
        long small = messages * SMALL_SHARE_PERCENT / 100;
        return List.of(new WarmupPhase.Shape("large", 100, 10, messages - small),
                new WarmupPhase.Shape("small", 10, 100, small));
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
