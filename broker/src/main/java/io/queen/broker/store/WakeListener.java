package io.queen.broker.store;

import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * LISTENs on {@value WakeCodec#CHANNEL} on a connection of its own and hands every payload to the
 * {@link WakeDispatcher}. A lost connection is reopened with jittered backoff, and each new session
 * tells the dispatcher, since anything may have been missed meanwhile. The session's
 * application_name carries the broker id, which is how other brokers' senders see this one listen.
 */
final class WakeListener {
    private static final Logger LOG = Logger.getLogger(WakeListener.class.getName());
    private static final int LISTEN_POLL_MS = 500;
    // A silently dropped connection (no RST) is noticed by this probe rather than by TCP keepalive.
    private static final long PROBE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(15_000);

    private final WakeConnections connections;
    private final String applicationName;
    private final WakeDispatcher dispatcher;
    private final String where;
    private final AtomicLong sessions = new AtomicLong();
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean listening;

    WakeListener(WakeConnections connections, String applicationName, WakeDispatcher dispatcher) {
        this.connections = Objects.requireNonNull(connections, "connections");
        this.applicationName = Objects.requireNonNull(applicationName, "applicationName");
        this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
        this.where = connections.where();
        this.thread = WakeConnections.daemon(WakeConnections.LISTENER_PREFIX, this::listenLoop);
    }

    void start() {
        thread.start();
    }

    /** Whether the connection is up and LISTENing right now. */
    boolean listening() {
        return listening;
    }

    /** How many times LISTEN has (re)started: 1 after the first connect. */
    long sessions() {
        return sessions.get();
    }

    /** Tells the loop to end; {@link #awaitStop} waits for it. */
    void stop() {
        closed = true;
        thread.interrupt();
    }

    void awaitStop(Duration patience) {
        closed = true;
        connections.stop(thread, patience);
    }

    private void listenLoop() {
        Backoff backoff = WakeConnections.newBackoff();
        while (!closed) {
            Connection conn = null;
            try {
                conn = connections.open(applicationName);
                try (Statement st = conn.createStatement()) {
                    st.execute("LISTEN " + WakeCodec.CHANNEL);
                }
                listening = true;
                long session = sessions.incrementAndGet();
                if (session > 1) {
                    LOG.info("wake listener reconnected to " + where);
                }
                // Whatever was published while we were not listening is unknown: every parked pop re-claims.
                dispatcher.listenerConnected();
                backoff.reset();
                receive(conn.unwrap(PGConnection.class), conn);
            } catch (SQLException e) {
                if (!closed) {
                    LOG.warning("wake listener lost PostgreSQL at " + where + " (" + e.getMessage()
                            + "); reconnecting in ~" + Math.max(backoff.current() * 2, WakeConnections.BACKOFF_START_MS)
                            + " ms");
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "wake listener failed on " + where + "; reconnecting", e);
            } finally {
                listening = false;
                WakeConnections.closeQuietly(conn);
            }
            if (!closed) {
                BackgroundThread.pause(backoff.next());
            }
        }
    }

    private void receive(PGConnection pg, Connection conn) throws SQLException {
        long lastHeard = System.nanoTime();
        while (!closed) {
            PGNotification[] notes = pg.getNotifications(LISTEN_POLL_MS);
            long now = System.nanoTime();
            if (notes != null && notes.length > 0) {
                lastHeard = now;
                for (PGNotification n : notes) {
                    if (WakeCodec.CHANNEL.equals(n.getName())) {
                        dispatcher.deliver(n.getParameter());
                    }
                }
            } else if (now - lastHeard > PROBE_AFTER_NANOS) {
                if (!conn.isValid(WakeConnections.SOCKET_TIMEOUT_S)) {
                    throw new SQLException("listener connection stopped answering");
                }
                lastHeard = now;
            }
        }
    }
}
