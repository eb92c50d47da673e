package io.queen.broker.http.tls;

import io.helidon.webserver.WebServer;
import io.queen.broker.config.TlsSettings;
import io.queen.broker.lifecycle.BackgroundThread;

import java.time.Duration;
import java.util.Arrays;
import java.util.logging.Logger;

/**
 * Re-reads the listener's certificate and key every interval and, when the files changed and the
 * new pair is whole, hands it to the running server: new connections get the new certificate, open
 * ones keep theirs. A pair that cannot be served (half-written, mismatched) is logged and the last
 * good one stays, so a bad renewal never takes the listener down; the next change is tried again.
 */
public final class TlsReloader implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TlsReloader.class.getName());

    private final TlsSettings settings;
    private final WebServer server;
    private volatile ListenerTls serving;
    private volatile boolean stopped;
    private byte[] lastRefused;
    private final Thread thread;

    private TlsReloader(TlsSettings settings, WebServer server, ListenerTls serving) {
        this.settings = settings;
        this.server = server;
        this.serving = serving;
        this.thread = BackgroundThread.create("queen-tls-reload", this::loop);
    }

    public static TlsReloader start(TlsSettings settings, WebServer server, ListenerTls serving) {
        TlsReloader reloader = new TlsReloader(settings, server, serving);
        reloader.thread.start();
        return reloader;
    }

    private void loop() {
        while (!stopped && BackgroundThread.pause(settings.reloadInterval().toMillis())) {
            checkOnce();
        }
    }

    /** One look at the files; package-visible so a test can drive it without waiting. */
    void checkOnce() {
        byte[] now;
        try {
            now = ListenerTls.digestOf(settings);
        } catch (InvalidTlsMaterialException e) {
            LOG.warning("TLS reload: " + e.getMessage() + "; still serving the " + serving.describe());
            return;
        }
        if (serving.sameFilesAs(now) || Arrays.equals(now, lastRefused)) {
            return;
        }
        try {
            ListenerTls next = ListenerTls.read(settings);
            server.reloadTls(next.tls());
            serving = next;
            lastRefused = null;
            LOG.info("TLS reload: now serving the " + next.describe());
        } catch (InvalidTlsMaterialException e) {
            lastRefused = now;
            LOG.warning("TLS reload refused: " + e.getMessage() + "; still serving the " + serving.describe());
        } catch (RuntimeException e) {
            lastRefused = now;
            LOG.warning("TLS reload refused by the server (" + e.getClass().getSimpleName() + "); still serving the "
                    + serving.describe());
        }
    }

    @Override
    public void close() {
        stopped = true;
        BackgroundThread.stop(thread, Duration.ofSeconds(2), null);
    }
}
