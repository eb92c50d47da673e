package io.queen.broker.support;

import io.queen.broker.config.DatabaseSettings;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.PostgreSQLContainer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real PostgreSQL the tests run against, one per JVM, found in this order: a URL in
 * {@code QUEEN_TEST_PG_URL} (postgresql://user:password@host:port/database, what CI gives),
 * Testcontainers when a Docker engine answers, else an embedded PostgreSQL. Each test class takes
 * fresh databases from it so tests never see each other's rows.
 */
public final class TestPostgres {
    public record Server(String host, int port, String user, String password, String adminDatabase) {
        public String jdbcUrl(String database) {
            return "jdbc:postgresql://" + host + ":" + port + "/" + database;
        }
    }

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static Server server;

    private TestPostgres() {
    }

    public static synchronized Server server() {
        if (server == null) {
            server = locate();
        }
        return server;
    }

    /** A new, empty database on the test server, as broker settings. */
    public static DatabaseSettings freshDatabase(String purpose) {
        Server s = server();
        String name = "t_" + purpose.toLowerCase().replaceAll("[^a-z0-9]", "_") + "_" + ProcessHandle.current().pid()
                + "_" + COUNTER.incrementAndGet();
        try (Connection c = admin(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test database " + name, e);
        }
        return new DatabaseSettings(s.host(), s.port(), s.user(), s.password(), name, false, true,
                8, 30_000, false, null);
    }

    public static Connection admin() throws SQLException {
        Server s = server();
        return DriverManager.getConnection(s.jdbcUrl(s.adminDatabase()), s.user(), s.password());
    }

    public static Connection connect(DatabaseSettings db) throws SQLException {
        return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
    }

    private static Server locate() {
        String url = System.getenv("QUEEN_TEST_PG_URL");
        if (url != null && !url.isBlank()) {
            URI uri = URI.create(url.trim());
            String[] userInfo = uri.getUserInfo() == null ? new String[] {"postgres", ""} : uri.getUserInfo().split(":", 2);
            String db = uri.getPath() == null || uri.getPath().length() <= 1 ? "postgres" : uri.getPath().substring(1);
            Server s = new Server(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(), userInfo[0],
                    userInfo.length > 1 ? userInfo[1] : "", db);
            System.err.println("[test-postgres] using QUEEN_TEST_PG_URL at " + s.host() + ":" + s.port());
            return s;
        }
        if (dockerAnswers()) {
            PostgreSQLContainer<?> pg = new PostgreSQLContainer<>("postgres:16-alpine");
            pg.start();
            Runtime.getRuntime().addShutdownHook(new Thread(pg::stop));
            System.err.println("[test-postgres] using Testcontainers postgres:16-alpine");
            return new Server(pg.getHost(), pg.getFirstMappedPort(), pg.getUsername(), pg.getPassword(),
                    pg.getDatabaseName());
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
            System.err.println("[test-postgres] no QUEEN_TEST_PG_URL and no Docker: using embedded PostgreSQL on port "
                    + pg.getPort());
            return new Server("localhost", pg.getPort(), "postgres", "postgres", "postgres");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start an embedded PostgreSQL for the tests", e);
        }
    }

    private static boolean dockerAnswers() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | NoClassDefFoundError e) {
            return false;
        }
    }
}
