package io.queen.broker.support;

import io.queen.broker.Broker;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.store.SchemaApplier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/** Starts real brokers over real HTTP on a fresh database of the test PostgreSQL. */
public final class BrokerFixture {
    /** The temporary spool folders made here, removed when the test JVM ends (hundreds per build otherwise). */
    private static final List<Path> TEMP_SPOOLS = new CopyOnWriteArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> TEMP_SPOOLS.forEach(BrokerFixture::deleteTree),
                "remove-temp-spools"));
    }

    private BrokerFixture() {
    }

    /**
     * A broker on {@code db}. Its push spool is a fresh temporary folder unless {@code extraEnv} names
     * FILE_BUFFER_DIR: the default is a system folder, shared by every broker of the machine, where
     * one test's spooled pushes would be replayed into another test's database.
     */
    public static Broker start(DatabaseSettings db, Map<String, String> extraEnv) {
        Map<String, String> env = new HashMap<>(extraEnv);
        env.put("PG_HOST", db.host());
        env.putIfAbsent("PORT", "0");
        env.putIfAbsent("DB_POOL_SIZE", "16");
        if (!env.containsKey("FILE_BUFFER_DIR")) {
            try {
                Path spool = Files.createTempDirectory("queen-spool-");
                TEMP_SPOOLS.add(spool);
                env.put("FILE_BUFFER_DIR", spool.toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Env vars = new Env(env);
        return Broker.start(BrokerSettings.from(vars).withDatabase(db), SchemaApplier.Options.defaults(),
                MaintenanceSettings.from(vars));
    }

    /** A broker whose push spool is {@code spoolDir}, with its drain loop waking every 20 ms. */
    public static Broker startWithSpool(DatabaseSettings db, Path spoolDir, Map<String, String> extraEnv) {
        Map<String, String> env = new HashMap<>(extraEnv);
        env.put("FILE_BUFFER_DIR", spoolDir.toString());
        env.putIfAbsent("FILE_BUFFER_FLUSH_MS", "20");
        return start(db, env);
    }

    /** Runs SQL against the broker's database, e.g. to set a queue option the test needs. */
    public static void sql(DatabaseSettings db, String statement) {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement()) {
            st.execute(statement);
        } catch (SQLException e) {
            throw new IllegalStateException(statement, e);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Best effort at exit: a folder left behind is only litter in the temp folder.
        }
    }
}
