package io.queen.broker;

import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.store.DatabaseUnavailableException;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BrokerIT {
    private final List<Broker> running = new ArrayList<>();

    @AfterEach
    void stopBrokers() {
        running.forEach(Broker::close);
    }

    static BrokerSettings settingsFor(DatabaseSettings db, Map<String, String> extraEnv) {
        Map<String, String> env = new java.util.HashMap<>(extraEnv);
        env.put("PG_HOST", db.host());
        env.put("PORT", "0");
        env.put("DB_POOL_SIZE", "8");
        return BrokerSettings.from(new Env(env)).withDatabase(db);
    }

    private Broker start(DatabaseSettings db, Map<String, String> env) {
        Broker b = Broker.start(settingsFor(db, env));
        running.add(b);
        return b;
    }

    @Test
    void healthReportsTheDatabaseAndTheCompiledInVersion() {
        Broker b = start(TestPostgres.freshDatabase("health"), Map.of());
        HttpProbe.Reply r = new HttpProbe(b.port()).get("/health");
        assertEquals(200, r.status());
        assertEquals("healthy", r.json().get("status").asText());
        assertEquals("connected", r.json().get("database").asText());
        assertEquals("1.5.3", r.json().get("version").asText());
        assertEquals(Version.VALUE, r.json().get("version").asText());
    }

    @Test
    void statusIsALivenessProbeThatAnswersOk() {
        Broker b = start(TestPostgres.freshDatabase("status"), Map.of());
        HttpProbe.Reply r = new HttpProbe(b.port()).get("/status");
        assertEquals(200, r.status());
        assertEquals("ok", r.json().get("status").asText());
    }

    @Test
    void healthAnswers503WhileTheDatabaseRefusesConnectionsAndRecoversAfter() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("health_down");
        Broker b = start(db, Map.of());
        HttpProbe http = new HttpProbe(b.port());
        assertEquals(200, http.get("/health").status());

        try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement()) {
            st.execute("ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS false");
            st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db.database() + "'");
        }
        HttpProbe.Reply down = http.get("/health");
        assertEquals(503, down.status(), down.body());
        assertEquals("unhealthy", down.json().get("status").asText());
        assertEquals("disconnected", down.json().get("database").asText());
        assertFalse(down.json().get("reason").asText().isEmpty());
        assertEquals(200, http.get("/status").status(), "liveness must not depend on the database");

        try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement()) {
            st.execute("ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS true");
        }
        org.awaitility.Awaitility.await().atMost(30, TimeUnit.SECONDS)
                .until(() -> http.get("/health").status() == 200);
    }

    @Test
    void aBodyOverTheLimitIsRefusedWith413AndTheServerKeepsServing() {
        Broker b = start(TestPostgres.freshDatabase("body_limit"), Map.of("QUEEN_MAX_BODY_BYTES", "4096"));
        HttpProbe http = new HttpProbe(b.port());
        String big = "{\"items\":[{\"queue\":\"q\",\"payload\":\"" + "x".repeat(10_000) + "\"}]}";
        assertEquals(413, http.post("/api/v1/push", big).status());
        assertEquals(200, http.get("/health").status());
    }

    @Test
    void anUnknownApiPathIs404WithTheReferenceBody() {
        Broker b = start(TestPostgres.freshDatabase("no_route"), Map.of());
        HttpProbe.Reply r = new HttpProbe(b.port()).get("/api/v1/no/such/route");
        assertEquals(404, r.status());
        assertEquals("Not Found", r.json().get("error").asText());
        assertEquals("no_such_route", r.json().get("code").asText());
    }

    @Test
    void anUnknownPathOutsideTheApiIs404NotAServerError() {
        // Clients retry 5xx; a route this broker does not serve (e.g. /streams/v1 here) must fail at once.
        Broker b = start(TestPostgres.freshDatabase("no_route_outside"), Map.of());
        for (String path : List.of("/no-such-page", "/streams/v1/queries")) {
            HttpProbe.Reply r = new HttpProbe(b.port()).get(path);
            assertEquals(404, r.status(), path);
            assertTrue(r.json().get("error").asText().length() > 0, path);
        }
    }

    @Test
    void withApplySchemaOffTheBrokerServesWithoutTouchingTheSchema() throws SQLException {
        DatabaseSettings db = TestPostgres.freshDatabase("no_apply");
        Broker b = start(db, Map.of("QUEEN_APPLY_SCHEMA", "0"));
        assertEquals(200, new HttpProbe(b.port()).get("/health").status());
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname = 'queen'")) {
            rs.next();
            assertEquals(0, rs.getInt(1));
        }
    }

    @Test
    void twoBrokersBootingAtOnceOnOneEmptyDatabaseBothComeUp() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("two_boots");
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService twoThreads = Executors.newFixedThreadPool(2);
        var first = CompletableFuture.supplyAsync(() -> awaitThenStart(go, db), twoThreads);
        var second = CompletableFuture.supplyAsync(() -> awaitThenStart(go, db), twoThreads);
        go.countDown();
        Broker a = first.get(120, TimeUnit.SECONDS);
        Broker b = second.get(120, TimeUnit.SECONDS);
        twoThreads.shutdown();
        assertEquals(200, new HttpProbe(a.port()).get("/health").status());
        assertEquals(200, new HttpProbe(b.port()).get("/health").status());
    }

    private Broker awaitThenStart(CountDownLatch go, DatabaseSettings db) {
        try {
            go.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Broker broker = Broker.start(settingsFor(db, Map.of()));
        synchronized (running) {
            running.add(broker);
        }
        return broker;
    }

    @Test
    void productionModeFailsFastNamingHostAndPortWhenPostgresIsUnreachable() {
        BrokerSettings s = BrokerSettings.from(new Env(Map.of("PG_HOST", "127.0.0.1", "PG_PORT", "1", "PORT", "0")));
        DatabaseUnavailableException e = assertThrows(DatabaseUnavailableException.class, () -> Broker.start(s));
        assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
    }

    @Test
    void developmentModeStartsAnEmbeddedPostgresWhoseDataSurvivesARestart(@TempDir Path dir) throws SQLException {
        Map<String, String> env = Map.of("PORT", "0", "DB_POOL_SIZE", "4",
                "QUEEN_DEV_DATA_DIR", dir.resolve("pgdata").toString());
        try (Broker first = Broker.start(BrokerSettings.from(new Env(env)))) {
            assertEquals(200, new HttpProbe(first.port()).get("/health").status());
            try (Connection c = first.database().connection(); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE public.survivor (x int)");
            }
        }
        try (Broker second = Broker.start(BrokerSettings.from(new Env(env)));
             Connection c = second.database().connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT to_regclass('public.survivor') IS NOT NULL")) {
            rs.next();
            assertTrue(rs.getBoolean(1), "the table created before the restart is still there");
        }
    }
}
