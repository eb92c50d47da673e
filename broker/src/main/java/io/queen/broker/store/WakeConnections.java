package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The dedicated connections of the wake channel's two loops (never the request pool): how one is
 * opened and named, given up and retried, and the thread a loop holding one runs on.
 */
final class WakeConnections {
    /** The listener's application_name starts so; the rest is the broker id (see {@link #listenerName}). */
    static final String LISTENER_PREFIX = "queen-wake-listener";
    static final String SENDER_NAME = "queen-wake-sender";
    static final int SOCKET_TIMEOUT_S = 10;
    static final long BACKOFF_START_MS = 200;
    private static final long BACKOFF_CAP_MS = 5_000;
    private static final int APPLICATION_NAME_BYTES = 63;

    private static final Logger LOG = Logger.getLogger(WakeConnections.class.getName());

    private final DatabaseSettings settings;
    private final String where;

    WakeConnections(DatabaseSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.where = settings.host() + ":" + settings.port() + "/" + settings.database();
    }

    /** host:port/database, for log lines. */
    String where() {
        return where;
    }

    /** A new autocommit connection whose session shows {@code applicationName} in pg_stat_activity. */
    Connection open(String applicationName) throws SQLException {
        Properties p = Database.connectionProperties(settings);
        p.setProperty("user", settings.user());
        p.setProperty("password", settings.password());
        p.setProperty("ApplicationName", applicationName);
        p.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT_S));
        Connection c = DriverManager.getConnection(settings.jdbcUrl(), p);
        c.setAutoCommit(true); // NOTIFY is delivered at commit; LISTEN must not sit in an open transaction.
        return c;
    }

    /**
     * This broker's listener session as other brokers see it: the sender of each broker looks for
     * names with {@link #LISTENER_PREFIX} other than its own.
     */
    static String listenerName(String brokerId) {
        return LISTENER_PREFIX + " " + brokerId;
    }

    /** What PostgreSQL keeps of an application_name: at most 63 bytes, never a split character. */
    static String truncated(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= APPLICATION_NAME_BYTES) {
            return name;
        }
        int end = APPLICATION_NAME_BYTES;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }

    static boolean stillUsable(Connection c) {
        try {
            return c.isValid(2);
        } catch (SQLException e) {
            return false;
        }
    }

    static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // The connection is already broken; nothing left to release.
        }
    }

    /** Waits up to {@code patience} for a loop told to stop; one that does not is logged as stuck here. */
    void stop(Thread loop, Duration patience) {
        BackgroundThread.stop(loop, patience, "stuck connecting to " + where + "?");
    }

    /** The waits between reconnects of one loop. */
    static Backoff newBackoff() {
        // Half either side: brokers that lost the same database do not reconnect in step.
        return new Backoff(BACKOFF_START_MS, BACKOFF_CAP_MS, 0.5);
    }

    /** A daemon thread running {@code loop}, not started; a loop ended by a failure is run again. */
    static Thread daemon(String name, Runnable loop) {
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
