package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.Logger;

/**
 * Development mode only: a PostgreSQL started by the broker itself, its data kept in a local folder
 * so queues survive restarts. The binaries are not part of the production classpath or image, so
 * this class is only ever loaded when no PG_HOST was given.
 */
public final class EmbeddedDatabase implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(EmbeddedDatabase.class.getName());

    private final EmbeddedPostgres postgres;
    private final DatabaseSettings settings;

    private EmbeddedDatabase(EmbeddedPostgres postgres, DatabaseSettings settings) {
        this.postgres = postgres;
        this.settings = settings;
    }

    public static EmbeddedDatabase start(DatabaseSettings base) {
        Path dataDir = Path.of(base.embeddedDataDir()).toAbsolutePath();
        try {
            Files.createDirectories(dataDir.getParent());
            boolean fresh = !Files.exists(dataDir.resolve("PG_VERSION"));
            LOG.info(() -> "development mode: " + (fresh ? "creating" : "starting") + " an embedded PostgreSQL in "
                    + dataDir + " (set PG_HOST to use a real server)");
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDir.toFile())
                    .setCleanDataDirectory(false)
                    .setOverrideWorkingDirectory(new File(dataDir.getParent().toFile(), "binaries"))
                    .setServerConfig("timezone", "UTC")
                    .start();
            DatabaseSettings settings = base.withEndpoint("localhost", pg.getPort(), "postgres", "postgres", "postgres");
            LOG.info(() -> "embedded PostgreSQL listening on localhost:" + pg.getPort());
            return new EmbeddedDatabase(pg, settings);
        } catch (IOException e) {
            throw new DatabaseUnavailableException("cannot start the embedded development PostgreSQL in " + dataDir
                    + ": " + e.getMessage(), e);
        }
    }

    public DatabaseSettings settings() {
        return settings;
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            LOG.warning("embedded PostgreSQL did not stop cleanly: " + e.getMessage());
        }
    }
}
