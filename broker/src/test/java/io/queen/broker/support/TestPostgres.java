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
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real PostgreSQL the tests run against, one per JVM, found in this order: a URL in
 * {@code QUEEN_TEST_PG_URL} (postgresql://user:password@host:port/database, what CI gives),
 * Testcontainers when a Docker engine answers, else an embedded PostgreSQL. Each test class takes
 * fresh databases from it so tests never see each other's rows. On a server given by URL (a
 * developer's own PostgreSQL) the databases are dropped when the JVM exits, and those left by
 * test JVMs that died without exiting are dropped at the next start.
 */
public final class TestPostgres {
    public record Server(String host, int port, String user, String password, String adminDatabase) {
        public String jdbcUrl(String database) {
            return "jdbc:postgresql://" + host + ":" + port + "/" + database;
        }
    }

    // t_<purpose>_<pid>_<counter>: the pid tells a later JVM whether the owner is still alive.
    private static final Pattern TEST_DATABASE = Pattern.compile("t_[a-z0-9_]*_(\\d+)_\\d+");

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Set<String> CREATED = ConcurrentHashMap.newKeySet();
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
            CREATED.add(name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test database " + name, e);
        }
        return new DatabaseSettings(s.host(), s.port(), s.user(), s.password(), name, false, true,
                8, 30_000, false, null);
    }

    public static Connection admin() throws SQLException {
        return admin(server());
    }

    private static Connection admin(Server s) throws SQLException {
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
            dropOrphans(s);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> drop(s, List.copyOf(CREATED))));
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

    /** Test databases whose creating JVM is gone (killed before its shutdown hook ran). */
    private static void dropOrphans(Server s) {
        List<String> orphans = new ArrayList<>();
        try (Connection c = admin(s);
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'")) {
            while (rs.next()) {
                Matcher m = TEST_DATABASE.matcher(rs.getString(1));
                if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                    orphans.add(m.group());
                }
            }
        } catch (SQLException | NumberFormatException e) {
            System.err.println("[test-postgres] cannot list old test databases: " + e.getMessage());
            return;
        }
        if (!orphans.isEmpty()) {
            System.err.println("[test-postgres] dropping " + orphans.size() + " test databases of JVMs that are gone");
            drop(s, orphans);
        }
    }

    private static void drop(Server s, List<String> names) {
        try (Connection c = admin(s); Statement st = c.createStatement()) {
            for (String name : names) {
                // FORCE: a broker of the test may still hold pooled connections at exit.
                st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            }
        } catch (SQLException e) {
            System.err.println("[test-postgres] cannot drop test databases: " + e.getMessage());
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
