package io.queen.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The PostgreSQL server the benchmark runs on: the one named by {@code QUEEN_BENCH_PG_URL}
 * (postgresql://user:pass@host:port/db, db being the admin database) else an embedded one started
 * here with PostgreSQL's default durability (fsync and synchronous_commit on; zonky turns both off).
 */
final class PgServer implements AutoCloseable {
    /** A database on this server, as the broker's PG_* variables would name it. */
    record Database(String host, int port, String user, String password, String name) {
        String jdbcUrl() {
            return "jdbc:postgresql://" + host + ":" + port + "/" + name;
        }

        Connection connect() throws SQLException {
            return DriverManager.getConnection(jdbcUrl(), user, password);
        }
    }

    private final Database admin;
    private final EmbeddedPostgres embedded;
    private final AtomicBoolean closed = new AtomicBoolean();

    private PgServer(Database admin, EmbeddedPostgres embedded) {
        this.admin = admin;
        this.embedded = embedded;
    }

    static PgServer locate(String url) throws IOException {
        if (url != null && !url.isBlank()) {
            return new PgServer(parseUrl(url.trim()), null);
        }
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setServerConfig("timezone", "UTC")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("fsync", "on")
                .start();
        PgServer server = new PgServer(new Database("localhost", pg.getPort(), "postgres", "postgres", "postgres"), pg);
        // An interrupted benchmark (Ctrl-C) must not leave the server running.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (IOException ignored) {
                // The JVM is exiting.
            }
        }, "bench-postgres-stop"));
        return server;
    }

    /** postgresql://user:pass@host:port/db; missing parts default to postgres/(empty)/5432/postgres. */
    static Database parseUrl(String url) {
        URI uri = URI.create(url);
        if (!"postgresql".equals(uri.getScheme()) && !"postgres".equals(uri.getScheme())) {
            throw new IllegalArgumentException("QUEEN_BENCH_PG_URL must start with postgresql://, got " + url);
        }
        String user = "postgres";
        String password = "";
        if (uri.getRawUserInfo() != null) {
            String[] parts = uri.getRawUserInfo().split(":", 2);
            user = decode(parts[0]);
            password = parts.length > 1 ? decode(parts[1]) : "";
        }
        String path = uri.getPath();
        String db = path == null || path.length() <= 1 ? "postgres" : path.substring(1);
        return new Database(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(), user, password, db);
    }

    String describe() {
        return (embedded != null ? "embedded PostgreSQL" : "PostgreSQL") + " at " + admin.host() + ":" + admin.port();
    }

    /** Version and the settings that move write throughput most, for the report header. */
    String settingsSummary() throws SQLException {
        try (Connection c = admin.connect(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT current_setting('server_version'), "
                     + "current_setting('synchronous_commit'), current_setting('fsync'), "
                     + "current_setting('shared_buffers'), current_setting('full_page_writes')")) {
            rs.next();
            return "PostgreSQL " + rs.getString(1) + ", synchronous_commit=" + rs.getString(2) + ", fsync="
                    + rs.getString(3) + ", shared_buffers=" + rs.getString(4) + ", full_page_writes=" + rs.getString(5);
        }
    }

    Database createDatabase(String name) throws SQLException {
        try (Connection c = admin.connect(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            st.execute("CREATE DATABASE " + name);
        }
        return new Database(admin.host(), admin.port(), admin.user(), admin.password(), name);
    }

    void dropDatabase(Database db) throws SQLException {
        try (Connection c = admin.connect(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + db.name() + " WITH (FORCE)");
        }
    }

    @Override
    public void close() throws IOException {
        if (embedded != null && closed.compareAndSet(false, true)) {
            embedded.close();
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
