package io.queen.broker.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.broker.config.DatabaseSettings;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The broker's connection pool. Sessions run in UTC (timestamps rendered by SQL assume it) with the
 * broker-side statement timeout. Opening checks reachability first so an unreachable server is
 * reported with its host and port rather than as a pool timeout.
 */
public final class Database implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Database.class.getName());

    /**
     * The send buffer of each pooled connection, in the JVM and in the kernel: a 100-message segment
     * of 1 KB payloads is about 55 KB, so two merged requests still leave in one write. At the
     * default pool size of 160 this is at most 20 MB of heap.
     */
    static final int SEND_BUFFER_BYTES = 128 * 1024;

    private final DatabaseSettings settings;
    private final HikariDataSource pool;

    private Database(DatabaseSettings settings, HikariDataSource pool) {
        this.settings = settings;
        this.pool = pool;
    }

    public static Database open(DatabaseSettings settings) {
        checkReachable(settings);
        HikariConfig cfg = new HikariConfig();
        cfg.setPoolName("queen-pg");
        cfg.setJdbcUrl(settings.jdbcUrl());
        cfg.setUsername(settings.user());
        cfg.setPassword(settings.password());
        cfg.setMaximumPoolSize(settings.poolSize());
        cfg.setMinimumIdle(Math.min(4, settings.poolSize()));
        // A request waits at most this long for a connection before it is answered with an error.
        cfg.setConnectionTimeout(5_000);
        cfg.setValidationTimeout(2_000);
        cfg.setInitializationFailTimeout(-1);
        connectionProperties(settings).forEach((k, v) -> cfg.addDataSourceProperty((String) k, v));
        HikariDataSource ds = new HikariDataSource(cfg);
        LOG.info(() -> "connection pool open to " + settings.describe() + " (max " + settings.poolSize() + ")");
        return new Database(settings, ds);
    }

    public DataSource dataSource() {
        return pool;
    }

    public DatabaseSettings settings() {
        return settings;
    }

    public Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /**
     * Rolls back after {@code cause} failed a transaction. On a connection that broke (the usual
     * cause) the rollback fails too; that failure is attached to {@code cause} rather than thrown
     * in its place, which hid the lost connection's SQLSTATE and turned a 503 into a 500.
     */
    public static void rollbackAfter(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * Puts a pooled connection back in autocommit after a transaction. On a broken connection this
     * fails and changes nothing: the pool discards it, and the outcome already decided (a commit, or
     * the exception on its way out) must not be replaced by this one.
     */
    public static void restoreAutoCommit(Connection c) {
        try {
            c.setAutoCommit(true);
        } catch (SQLException e) {
            LOG.fine(() -> "autocommit not restored on a broken connection: " + e.getMessage());
        }
    }

    /** One round trip; throws when the database does not answer. */
    public void ping() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.setQueryTimeout(5);
            try (ResultSet rs = s.executeQuery("SELECT 1")) {
                rs.next();
            }
        }
    }

    public int activeConnections() {
        return pool.getHikariPoolMXBean() == null ? 0 : pool.getHikariPoolMXBean().getActiveConnections();
    }

    public int idleConnections() {
        return pool.getHikariPoolMXBean() == null ? 0 : pool.getHikariPoolMXBean().getIdleConnections();
    }

    public int waitingRequests() {
        return pool.getHikariPoolMXBean() == null ? 0 : pool.getHikariPoolMXBean().getThreadsAwaitingConnection();
    }

    @Override
    public void close() {
        pool.close();
    }

    static Properties connectionProperties(DatabaseSettings settings) {
        Properties p = new Properties();
        // jit=off: PostgreSQL JIT-compiles a statement whose estimate passes jit_above_cost, and
        // plpgsql's generic plans (row counts unknown) pass it easily. The compile is redone on every
        // execution: a dedup probe over a partition's hour (36,000 hashes) took 39 ms with it and
        // 5 ms without. The broker's statements are short; none gains from JIT what it costs.
        p.setProperty("options", "-c TimeZone=UTC -c statement_timeout=" + settings.statementTimeoutMs()
                + " -c jit=off");
        p.setProperty("connectTimeout", "10");
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("ApplicationName", "queen-broker");
        // pgjdbc buffers what it sends in min(maxSendBufferSize, the socket's send buffer), 8 KB by
        // default: a push's Bind, which carries a segment blob of tens of KB, left in three writes,
        // each waking the backend (strace of the P=10 push phase). One buffer that holds a typical
        // flush sends each statement in one write.
        p.setProperty("sendBufferSize", Integer.toString(SEND_BUFFER_BYTES));
        p.setProperty("maxSendBufferSize", Integer.toString(SEND_BUFFER_BYTES));
        if (settings.ssl()) {
            p.setProperty("ssl", "true");
            p.setProperty("sslmode", settings.sslRejectUnauthorized() ? "verify-full" : "require");
        } else {
            // PG_USE_SSL=false means plain TCP, as in the reference broker (its connection string
            // says sslmode=disable). pgjdbc's own default, "prefer", would take TLS whenever the
            // server offers it (Debian's PostgreSQL does by default): every statement encrypted
            // and about 450 TLS classes loaded that the user never asked for.
            p.setProperty("sslmode", "disable");
        }
        return p;
    }

    private static void checkReachable(DatabaseSettings settings) {
        Properties p = connectionProperties(settings);
        p.setProperty("user", settings.user());
        p.setProperty("password", settings.password());
        try (Connection c = DriverManager.getConnection(settings.jdbcUrl(), p)) {
            c.isValid(5);
        } catch (SQLException e) {
            throw new DatabaseUnavailableException("cannot connect to PostgreSQL at " + settings.host() + ":"
                    + settings.port() + " (database " + settings.database() + ", user " + settings.user() + "): "
                    + e.getMessage(), e);
        }
    }
}
