package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;
import io.queen.broker.store.WakeCodec.Key;
import io.queen.broker.store.WakeCodec.QueueOf;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Wakes long-poll pops of every broker sharing the database when a push commits. Locally the hub is
 * signalled at once; other brokers learn through PostgreSQL NOTIFY on {@value #CHANNEL}, needing no
 * configuration beyond the database itself. A busy queue does not cost one NOTIFY per message: the
 * committed keys are collected in a set and sent every {@value #TICK_MS} ms, several keys per payload.
 *
 * <p>Both directions use a dedicated connection of their own (never the request pool) and survive a
 * database restart: they reconnect with jittered backoff, and after the listener is back every parked
 * pop is woken, since anything may have been missed meanwhile. Delivery is best effort; pops still
 * re-claim on their own backoff.
 *
 * <p>A broker alone on its database sends nothing: the listener's application_name carries the
 * broker id, and the sender looks (at most once a second) for another broker's listener in
 * pg_stat_activity. Under load a lone broker otherwise sent a NOTIFY every tick for nobody. A
 * broker that starts listening is noticed within a second; until then its parked pops rely on
 * its own re-check, and its listener wakes all of them when it connects.
 *
 * <p>Queue option changes travel the same way, so another broker drops its cached options (encryption,
 * dedup window) at once instead of after the catalog's TTL.
 *
 * <p>The payloads are {@link WakeCodec}'s.
 */
public final class PgWakeChannel implements AutoCloseable {
    public static final String CHANNEL = WakeCodec.CHANNEL;
    static final long TICK_MS = 5;

    private static final Logger LOG = Logger.getLogger(PgWakeChannel.class.getName());
    private static final long BACKOFF_START_MS = 200;
    private static final long BACKOFF_CAP_MS = 5_000;
    private static final int LISTEN_POLL_MS = 500;
    // A silently dropped connection (no RST) is noticed by this probe rather than by TCP keepalive.
    private static final long LISTENER_PROBE_MS = 15_000;
    private static final int SOCKET_TIMEOUT_S = 10;
    private static final String LISTENER_NAME = "queen-wake-listener";
    private static final long PEER_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final DatabaseSettings settings;
    private final WakeTarget hub;
    private final String brokerId;
    private final WakeCodec codec;
    private final String where;
    private final Set<Key> dirty = ConcurrentHashMap.newKeySet();
    private final Set<QueueOf> changedQueues = ConcurrentHashMap.newKeySet();
    private volatile BiConsumer<UUID, String> onQueueChanged = (tenant, queue) -> { };
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong unsentAlone = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong listenSessions = new AtomicLong();
    private final Thread sender;
    private final Thread listener;
    /** This broker's listener session as other brokers see it; PostgreSQL keeps 63 bytes. */
    private final String listenerName;
    private boolean peersListening = true; // sender thread only
    private long peersCheckedAt;
    private volatile boolean closed;
    private volatile boolean listening;

    public PgWakeChannel(DatabaseSettings settings, WakeTarget hub, String brokerId) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.hub = Objects.requireNonNull(hub, "hub");
        this.brokerId = Objects.requireNonNull(brokerId, "brokerId");
        this.codec = new WakeCodec(brokerId);
        this.where = settings.host() + ":" + settings.port() + "/" + settings.database();
        this.listenerName = LISTENER_NAME + " " + brokerId;
        this.peersCheckedAt = System.nanoTime() - PEER_CHECK_NANOS;
        this.sender = daemon("queen-wake-sender", this::sendLoop);
        this.listener = daemon("queen-wake-listener", this::listenLoop);
        sender.start();
        listener.start();
    }

    /** A random id for this broker process, so a broker ignores its own notifications. */
    public static String newBrokerId() {
        return UUID.randomUUID().toString();
    }

    /** A push (or anything making messages visible) committed here: wake local pops now, other brokers on the next tick. */
    public void published(UUID tenant, String queue, String partition) {
        hub.signal(tenant, queue, partition);
        if (!closed) {
            dirty.add(new Key(tenant, queue, partition));
        }
    }

    /** A queue's options changed here: other brokers drop what they cached of it on the next tick. */
    public void queueChanged(UUID tenant, String queue) {
        if (!closed) {
            changedQueues.add(new QueueOf(tenant, queue));
        }
    }

    /** What to do when another broker reports a queue's options changed. */
    public void onQueueChanged(BiConsumer<UUID, String> action) {
        this.onQueueChanged = Objects.requireNonNull(action, "action");
    }

    /** NOTIFY payloads sent to other brokers. */
    public long notificationsSent() {
        return sent.get();
    }

    /** Ticks whose keys were not sent because no other broker was listening. */
    public long ticksUnsentAlone() {
        return unsentAlone.get();
    }

    /** Notifications received from other brokers (our own echoes are not counted). */
    public long notificationsReceived() {
        return received.get();
    }

    /** Whether the listener connection is up and LISTENing right now. */
    public boolean listening() {
        return listening;
    }

    /** How many times the listener has (re)started LISTENing: 1 after the first connect. */
    public long listenSessions() {
        return listenSessions.get();
    }

    public String brokerId() {
        return brokerId;
    }

    @Override
    public void close() {
        closed = true;
        String stuck = "stuck connecting to " + where + "?";
        sender.interrupt();
        BackgroundThread.stop(listener, Duration.ofSeconds(2), stuck);
        BackgroundThread.stop(sender, Duration.ofSeconds(2), stuck);
    }

    // ---- sender ----

    private void sendLoop() {
        Connection conn = null;
        Backoff backoff = newBackoff();
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
                        conn = connect("queen-wake-sender");
                        LOG.fine(() -> "wake sender connected to " + where);
                    }
                    if (!peersListening(conn)) {
                        unsentAlone.incrementAndGet();
                        continue;
                    }
                    List<String> payloads = codec.encodeKeys(batch);
                    payloads.addAll(codec.encodeConfig(changed));
                    notifyAll(conn, payloads);
                    backoff.reset();
                } catch (SQLException e) {
                    if (conn != null && stillUsable(conn)) {
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
                    closeQuietly(conn);
                    conn = null;
                    BackgroundThread.pause(wait);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "wake sender failed a tick for " + batch.size() + " keys and " + changed.size()
                            + " changed queues on " + where, e);
                }
            }
        } finally {
            closeQuietly(conn);
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
            ps.setString(1, LISTENER_NAME + "%");
            ps.setString(2, truncated(listenerName));
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

    /** What PostgreSQL keeps of an application_name: at most 63 bytes, never a split character. */
    static String truncated(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= 63) {
            return name;
        }
        int end = 63;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
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
                "SELECT count(pg_notify('" + CHANNEL + "', p)) FROM unnest(?::text[]) AS p")) {
            Array array = conn.createArrayOf("text", payloads.toArray());
            ps.setArray(1, array);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
            }
            array.free();
        }
        sent.addAndGet(payloads.size());
    }

    // ---- listener ----

    private void listenLoop() {
        Backoff backoff = newBackoff();
        while (!closed) {
            Connection conn = null;
            try {
                conn = connect(listenerName);
                try (Statement st = conn.createStatement()) {
                    st.execute("LISTEN " + CHANNEL);
                }
                listening = true;
                long session = listenSessions.incrementAndGet();
                if (session > 1) {
                    LOG.info("wake listener reconnected to " + where);
                }
                // Whatever was published while we were not listening is unknown: every parked pop re-claims.
                hub.signalAllWaiting();
                backoff.reset();
                receive(conn.unwrap(PGConnection.class), conn);
            } catch (SQLException e) {
                if (!closed) {
                    LOG.warning("wake listener lost PostgreSQL at " + where + " (" + e.getMessage()
                            + "); reconnecting in ~" + Math.max(backoff.current() * 2, BACKOFF_START_MS) + " ms");
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "wake listener failed on " + where + "; reconnecting", e);
            } finally {
                listening = false;
                closeQuietly(conn);
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
                    if (CHANNEL.equals(n.getName())) {
                        deliver(n.getParameter());
                    }
                }
            } else if (now - lastHeard > TimeUnit.MILLISECONDS.toNanos(LISTENER_PROBE_MS)) {
                if (!conn.isValid(SOCKET_TIMEOUT_S)) {
                    throw new SQLException("listener connection stopped answering");
                }
                lastHeard = now;
            }
        }
    }

    /** Applies one payload from another broker; a malformed one is logged and skipped. */
    void deliver(String payload) {
        switch (codec.decode(payload)) {
            case WakeCodec.Own own -> {
            }
            case WakeCodec.Malformed bad -> LOG.warning("skipping malformed wake notification on " + where + ": "
                    + bad.reason() + "; payload=" + WakeCodec.abbreviate(payload));
            case WakeCodec.Notice notice -> {
                received.incrementAndGet();
                notice.changed().forEach(q -> onQueueChanged.accept(q.tenant(), q.queue()));
                notice.keys().forEach(k -> hub.signal(k.tenant(), k.queue(), k.partition()));
            }
        }
    }

    // ---- shared ----

    private Connection connect(String purpose) throws SQLException {
        Properties p = Database.connectionProperties(settings);
        p.setProperty("user", settings.user());
        p.setProperty("password", settings.password());
        p.setProperty("ApplicationName", purpose);
        p.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT_S));
        Connection c = DriverManager.getConnection(settings.jdbcUrl(), p);
        c.setAutoCommit(true); // NOTIFY is delivered at commit; LISTEN must not sit in an open transaction.
        return c;
    }

    private static boolean stillUsable(Connection c) {
        try {
            return c.isValid(2);
        } catch (SQLException e) {
            return false;
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // The connection is already broken; nothing left to release.
        }
    }

    private static Backoff newBackoff() {
        // Half either side: brokers that lost the same database do not reconnect in step.
        return new Backoff(BACKOFF_START_MS, BACKOFF_CAP_MS, 0.5);
    }

    private static Thread daemon(String name, Runnable loop) {
        return BackgroundThread.create(name, () -> {
            // The loops handle their own failures; this only keeps an unforeseen one from ending the thread.
            while (true) {
                try {
                    loop.run();
                    return;
                } catch (RuntimeException e) {
                    LOG.log(Level.SEVERE, name + " failed; restarting it", e);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(BACKOFF_START_MS));
                }
            }
        });
    }
}
