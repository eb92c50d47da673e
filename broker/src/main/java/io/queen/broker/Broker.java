package io.queen.broker;

import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.http.ErrorMapping;
import io.queen.broker.http.HealthHttpService;
import io.queen.broker.http.Json;
import io.queen.broker.store.Database;
import io.queen.broker.store.EmbeddedDatabase;
import io.queen.broker.store.SchemaApplier;

import java.time.Duration;
import java.util.logging.Logger;

/**
 * One running broker: its database (embedded in development mode), the schema apply, and the HTTP
 * server. Boot order follows the reference: database, schema, then bind; so a listening broker is
 * a broker whose schema is in place.
 */
public final class Broker implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Broker.class.getName());

    private final EmbeddedDatabase embedded;
    private final Database database;
    private final WebServer server;

    private Broker(EmbeddedDatabase embedded, Database database, WebServer server) {
        this.embedded = embedded;
        this.database = database;
        this.server = server;
    }

    public static Broker start(BrokerSettings settings) {
        return start(settings, SchemaApplier.Options.defaults());
    }

    public static Broker start(BrokerSettings settings, SchemaApplier.Options schemaOptions) {
        EmbeddedDatabase embedded = null;
        Database database = null;
        try {
            DatabaseSettings dbSettings = settings.database();
            if (dbSettings.embedded()) {
                embedded = startEmbedded(dbSettings);
                dbSettings = embedded.settings();
            }
            database = Database.open(dbSettings);
            if (settings.applySchema()) {
                new SchemaApplier(database.dataSource(), schemaOptions, io.queen.broker.store.SchemaFiles::load).apply();
            } else {
                LOG.info("QUEEN_APPLY_SCHEMA=0: schema apply skipped; the schema must have been applied by a privileged role");
            }
            WebServer server = WebServer.builder()
                    .host(settings.bindAddress())
                    .port(settings.port())
                    .maxPayloadSize(settings.maxBodyBytes())
                    .shutdownHook(false)
                    .shutdownGracePeriod(Duration.ofSeconds(20))
                    .routing(routing(database))
                    .build()
                    .start();
            LOG.info("Queen broker " + Version.VALUE + " listening on " + settings.bindAddress() + ":" + server.port()
                    + " over PostgreSQL " + dbSettings.describe());
            return new Broker(embedded, database, server);
        } catch (RuntimeException e) {
            if (database != null) {
                database.close();
            }
            if (embedded != null) {
                embedded.close();
            }
            throw e;
        }
    }

    static void routing(HttpRouting.Builder routing, Database database) {
        ErrorMapping.register(routing);
        routing.register(new HealthHttpService(database));
        routing.any("/api/*", (req, res) ->
                Json.send(res, Status.NOT_FOUND_404, Json.object().put("error", "Not Found").put("code", "no_such_route")));
    }

    private static java.util.function.Consumer<HttpRouting.Builder> routing(Database database) {
        return r -> routing(r, database);
    }

    private static EmbeddedDatabase startEmbedded(DatabaseSettings settings) {
        try {
            return EmbeddedDatabase.start(settings);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("no PG_HOST is set and this build carries no embedded PostgreSQL"
                    + " (development mode is only available through bin/run); set PG_HOST", e);
        }
    }

    public int port() {
        return server.port();
    }

    public Database database() {
        return database;
    }

    /** Graceful: stop accepting, let in-flight requests finish, then close the pool and the embedded database. */
    @Override
    public void close() {
        LOG.info("shutting down: draining in-flight requests");
        server.stop();
        database.close();
        if (embedded != null) {
            embedded.close();
        }
        LOG.info("shutdown complete");
    }
}
