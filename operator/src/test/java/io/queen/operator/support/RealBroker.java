package io.queen.operator.support;

import io.queen.broker.Broker;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.Env;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real broker (this repository's broker module), started in the test JVM on a fresh database
 * of a real PostgreSQL: the one in {@code QUEEN_TEST_PG_URL} (postgresql://user:password@host:port/db,
 * what CI sets), else an embedded PostgreSQL started once per JVM. Tenancy by header is on, so
 * Tenant resources are real tenants. The database is dropped when the broker closes, so runs
 * against a developer's own PostgreSQL leave nothing behind. {@link #startWithJwt} starts it with
 * JWT authentication on, as the chart's {@code auth} values configure it; {@link #startWithTls} also
 * serves HTTPS only, from PEM files as the chart's {@code tls} values mount them.
 */
public final class RealBroker implements AutoCloseable {
    private record Server(String host, int port, String user, String password, String adminDatabase) {
    }

    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static Server server;

    private final Broker broker;
    private final String database;
    private final boolean tls;

    private RealBroker(Broker broker, String database, boolean tls) {
        this.broker = broker;
        this.database = database;
        this.tls = tls;
    }

    public static RealBroker start(String purpose) {
        return start(purpose, Map.of());
    }

    /** With {@code JWT_ENABLED=true} and this HS256 secret: every non-public route needs a token it signed. */
    public static RealBroker startWithJwt(String purpose, String secret) {
        return start(purpose, Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "HS256", "JWT_SECRET", secret));
    }

    /**
     * JWT on as {@link #startWithJwt}, and the listener on HTTPS only with this PEM chain and key
     * (re-read every 200 ms, so a test can renew them).
     */
    public static RealBroker startWithTls(String purpose, String secret, Path certFile, Path keyFile) {
        return start(purpose, Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "HS256", "JWT_SECRET", secret,
                "QUEEN_TLS_CERT_FILE", certFile.toString(), "QUEEN_TLS_KEY_FILE", keyFile.toString(),
                "QUEEN_TLS_RELOAD_INTERVAL_MS", "200"));
    }

    /** {@code extraEnv}: broker variables on top of the test defaults (the database, a free port, tenancy by header). */
    public static RealBroker start(String purpose, Map<String, String> extraEnv) {
        Server pg = server();
        String database = "op_" + purpose.toLowerCase().replaceAll("[^a-z0-9]", "_") + "_" + ProcessHandle.current().pid()
                + "_" + DATABASES.incrementAndGet();
        try (Connection c = admin(pg); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + database);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test database " + database, e);
        }
        Map<String, String> env = new HashMap<>();
        env.put("PG_HOST", pg.host());
        env.put("PG_PORT", Integer.toString(pg.port()));
        env.put("PG_USER", pg.user());
        env.put("PG_PASSWORD", pg.password());
        env.put("PG_DATABASE", database);
        env.put("PORT", "0");
        env.put("QUEEN_BIND_ADDR", "127.0.0.1");
        env.put("DB_POOL_SIZE", "8");
        env.put("QUEEN_TENANCY_HEADER", "true");
        env.put("QUEEN_KV_TRUSTED_PROXY", "true");
        env.putAll(extraEnv);
        return new RealBroker(Broker.start(BrokerSettings.from(new Env(env))), database,
                env.containsKey("QUEEN_TLS_CERT_FILE"));
    }

    /** https when started with TLS; the host is 127.0.0.1, so a certificate for it must name that address. */
    public URI url() {
        return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + broker.port());
    }

    @Override
    public void close() {
        broker.close();
        Server pg = server();
        try (Connection c = admin(pg); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        } catch (SQLException e) {
            System.err.println("[real-broker] cannot drop test database " + database + ": " + e.getMessage());
        }
    }

    private static Connection admin(Server pg) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + pg.host() + ":" + pg.port() + "/"
                + pg.adminDatabase(), pg.user(), pg.password());
    }

    private static synchronized Server server() {
        if (server != null) {
            return server;
        }
        String url = System.getenv("QUEEN_TEST_PG_URL");
        if (url != null && !url.isBlank()) {
            URI uri = URI.create(url.trim());
            String[] userInfo = uri.getUserInfo() == null ? new String[] {"postgres", ""} : uri.getUserInfo().split(":", 2);
            String db = uri.getPath() == null || uri.getPath().length() <= 1 ? "postgres" : uri.getPath().substring(1);
            server = new Server(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(), userInfo[0],
                    userInfo.length > 1 ? userInfo[1] : "", db);
            return server;
        }
        try {
            EmbeddedPostgres pg = EmbeddedPostgres.builder().setServerConfig("timezone", "UTC").start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    pg.close();
                } catch (IOException ignored) {
                    // The JVM is exiting.
                }
            }));
            server = new Server("localhost", pg.getPort(), "postgres", "postgres", "postgres");
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start an embedded PostgreSQL for the tests", e);
        }
    }
}
