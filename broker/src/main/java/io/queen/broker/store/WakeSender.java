package io.queen.broker.store;

import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;
import io.queen.broker.store.WakeCodec.Key;
import io.queen.broker.store.WakeCodec.QueueOf;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Tells other brokers what committed here. A busy queue does not cost one NOTIFY per message: the
 * keys are collected in a set and sent every {@value #TICK_MS} ms, several keys per payload, all of
 * a tick's payloads in one round trip, on a connection of its own that is reopened with jittered
 * backoff when lost (keys of a failed tick are sent again).
 *
 * <p>A broker alone on its database sends nothing: the sender looks (at most once a second) for
 * another broker's listener in pg_stat_activity. Under load a lone broker otherwise sent a NOTIFY
 * every tick for nobody. A broker that starts listening is noticed within a second; until then its
 * parked pops rely on their own re-check, and its listener wakes all of them when it connects.
 */
final class WakeSender {
    static final long TICK_MS = 5;

    private static final Logger LOG = Logger.getLogger(WakeSender.class.getName());
    private static final long PEER_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final WakeConnections connections;
    private final WakeCodec codec;
    /** This broker's own listener as pg_stat_activity shows it, which is not a peer. */
    private final String ownListener;
    private final String where;
    private final Set<Key> dirty = ConcurrentHashMap.newKeySet();
    private final Set<QueueOf> changedQueues = ConcurrentHashMap.newKeySet();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong unsentAlone = new AtomicLong();
    private final Thread thread;
    private boolean peersListening = true; // sender thread only
    private long peersCheckedAt;
    private volatile boolean closed;

    WakeSender(WakeConnections connections, WakeCodec codec, String ownListenerName) {
        this.connections = Objects.requireNonNull(connections, "connections");
        this.codec = Objects.requireNonNull(codec, "codec");
        this.ownListener = WakeConnections.truncated(ownListenerName);
        this.where = connections.where();
        this.peersCheckedAt = System.nanoTime() - PEER_CHECK_NANOS;
        this.thread = WakeConnections.daemon(WakeConnections.SENDER_NAME, this::sendLoop);
    }

    void start() {
        thread.start();
    }

    /** Messages became visible on a partition here: other brokers hear of it on the next tick. */
    void published(UUID tenant, String queue, String partition) {
        if (!closed) {
            dirty.add(new Key(tenant, queue, partition));
        }
    }

    /** A queue's options changed here: other brokers drop what they cached of it on the next tick. */
    void queueChanged(UUID tenant, String queue) {
        if (!closed) {
            changedQueues.add(new QueueOf(tenant, queue));
        }
    }

    /** NOTIFY payloads sent to other brokers. */
    long sent() {
        return sent.get();
    }

    /** Ticks whose keys were not sent because no other broker was listening. */
    long unsentAlone() {
        return unsentAlone.get();
    }

    /** Stops taking keys and tells the loop to end; {@link #awaitStop} waits for it. */
    void stop() {
        closed = true;
        thread.interrupt();
    }

    void awaitStop(Duration patience) {
        closed = true;
        connections.stop(thread, patience);
    }

    private void sendLoop() {
        Connection conn = null;
        Backoff backoff = WakeConnections.newBackoff();
        try {
            while (!closed) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MS));
                if (dirty.isEmpty() && changedQueues.isEmpty()) {
                    continue;
                }
                List<Key> batch = drain(dirty);
                List<QueueOf> changed = drain(changedQueues);
                try {
                    if (conn == null) {
                        conn = connections.open(WakeConnections.SENDER_NAME);
                        LOG.fine(() -> "wake sender connected to " + where);
                    }
                    if (!peersListening(conn)) {
                        unsentAlone.incrementAndGet();
                        continue;
                    }
                    List<String> payloads = new ArrayList<>(codec.encodeKeys(batch));
                    payloads.addAll(codec.encodeConfig(changed));
                    notifyAll(conn, payloads);
                    backoff.reset();
                } catch (SQLException e) {
                    if (conn != null && WakeConnections.stillUsable(conn)) {
                        // The database refused this batch itself; retrying it would fail forever.
                        LOG.warning("wake NOTIFY refused by PostgreSQL at " + where + ", dropping " + batch.size()
                                + " keys: " + e.getMessage());
                        continue;
                    }
                    // Sent again once reconnected: a broker whose listener stayed up would miss them.
                    dirty.addAll(batch);
                    changedQueues.addAll(changed);
                    long wait = backoff.next();
                    LOG.warning("wake sender lost PostgreSQL at " + where + " (" + e.getMessage() + "); retrying in ~"
                            + wait + " ms");
                    WakeConnections.closeQuietly(conn);
                    conn = null;
                    BackgroundThread.pause(wait);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "wake sender failed a tick for " + batch.size() + " keys and " + changed.size()
                            + " changed queues on " + where, e);
                }
            }
        } finally {
            WakeConnections.closeQuietly(conn);
        }
    }

    /** Whether another broker's listener is connected to this database; re-asked at most once a second. */
    private boolean peersListening(Connection conn) throws SQLException {
        long now = System.nanoTime();
        if (now - peersCheckedAt < PEER_CHECK_NANOS) {
            return peersListening;
        }
        // application_name is visible to every role, unlike most of pg_stat_activity.
        try (PreparedStatement ps = conn.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_stat_activity"
                + " WHERE datname = current_database() AND application_name LIKE ? AND application_name <> ?)")) {
            ps.setString(1, WakeConnections.LISTENER_PREFIX + "%");
            ps.setString(2, ownListener);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                boolean peers = rs.getBoolean(1);
                if (peers != peersListening) {
                    LOG.info(peers ? "another broker listens on " + where + ": sending wake notifications"
                            : "no other broker listens on " + where + ": wake notifications paused");
                }
                peersListening = peers;
            }
        }
        peersCheckedAt = now;
        return peersListening;
    }

    private static <T> List<T> drain(Set<T> set) {
        List<T> batch = new ArrayList<>();
        for (Iterator<T> it = set.iterator(); it.hasNext(); ) {
            batch.add(it.next());
            it.remove(); // An entry added again after this is sent on the next tick.
        }
        return batch;
    }

    /** One round trip per tick, however many payloads the keys need. */
    private void notifyAll(Connection conn, List<String> payloads) throws SQLException {
        if (payloads.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT count(pg_notify('" + WakeCodec.CHANNEL + "', p)) FROM unnest(?::text[]) AS p")) {
            Array array = conn.createArrayOf("text", payloads.toArray());
            ps.setArray(1, array);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
            }
            array.free();
        }
        sent.addAndGet(payloads.size());
    }
}
