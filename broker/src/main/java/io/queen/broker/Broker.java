package io.queen.broker;

import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.ConfigException;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.config.TlsSettings;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.ConsumerGroupAdminService;
import io.queen.broker.engine.DatabaseHealth;
import io.queen.broker.engine.DeadLetterService;
import io.queen.broker.engine.FetchService;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.MessageBrowseService;
import io.queen.broker.engine.ObservabilityService;
import io.queen.broker.engine.PopAutopilot;
import io.queen.broker.engine.PopService;
import io.queen.broker.engine.PushIntake;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.PushSpool;
import io.queen.broker.engine.QueueAdminService;
import io.queen.broker.engine.QueueCatalog;
import io.queen.broker.engine.SeekService;
import io.queen.broker.engine.TenantPurge;
import io.queen.broker.engine.TimerFire;
import io.queen.broker.engine.TraceService;
import io.queen.broker.engine.TransactionService;
import io.queen.broker.engine.auth.Authenticator;
import io.queen.broker.engine.dedup.DedupCache;
import io.queen.broker.engine.kv.KvQuota;
import io.queen.broker.engine.kv.KvRates;
import io.queen.broker.engine.kv.KvService;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.streams.StreamService;
import io.queen.broker.engine.timers.TimerGate;
import io.queen.broker.engine.timers.TimerService;
import io.queen.broker.engine.timers.TimerWake;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.http.AckHttpService;
import io.queen.broker.http.AnalyticsHttpService;
import io.queen.broker.http.AuthFilter;
import io.queen.broker.http.AuthHttpService;
import io.queen.broker.http.ConsumerGroupAdminHttpService;
import io.queen.broker.http.ConsumerGroupHttpService;
import io.queen.broker.http.DeadLetterHttpService;
import io.queen.broker.http.ErrorMapping;
import io.queen.broker.http.FetchHttpService;
import io.queen.broker.http.HealthHttpService;
import io.queen.broker.http.Json;
import io.queen.broker.http.KvHttpService;
import io.queen.broker.http.LeaseHttpService;
import io.queen.broker.http.MessagesHttpService;
import io.queen.broker.http.MetricsHttpService;
import io.queen.broker.http.PopHttpService;
import io.queen.broker.http.PushHttpService;
import io.queen.broker.http.QueueHttpService;
import io.queen.broker.http.RequestTextFilter;
import io.queen.broker.http.StatusHttpService;
import io.queen.broker.http.StreamsHttpService;
import io.queen.broker.http.SystemHttpService;
import io.queen.broker.http.Tenancy;
import io.queen.broker.http.TimerHttpService;
import io.queen.broker.http.TracesHttpService;
import io.queen.broker.http.TransactionHttpService;
import io.queen.broker.http.TransportErrors;
import io.queen.broker.http.tls.InvalidTlsMaterialException;
import io.queen.broker.http.tls.ListenerTls;
import io.queen.broker.http.tls.TlsReloader;
import io.queen.broker.jobs.BackgroundJobs;
import io.queen.broker.jobs.KvQuotaRefresh;
import io.queen.broker.jobs.KvSweeper;
import io.queen.broker.jobs.TimerSweeper;
import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.Database;
import io.queen.broker.store.EmbeddedDatabase;
import io.queen.broker.store.PgWakeChannel;
import io.queen.broker.store.SchemaApplier;
import io.queen.broker.warmup.SelfWarmup;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
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
    private final PgWakeChannel wakeChannel;
    private final WebServer server;
    private final Services services;
    private final BackgroundJobs jobs;
    private final TimerSweeper sweeper;
    /** The KV quota poll and the KV sweeper (null when QUEEN_SWEEPER=false), closed before the pool. */
    private final KvQuotaRefresh kvQuota;
    private final KvSweeper kvSweeper;
    private final TlsReloader tlsReloader;
    private final SelfWarmup warmup;

    private Broker(EmbeddedDatabase embedded, Database database, PgWakeChannel wakeChannel, WebServer server,
                   Services services, BackgroundJobs jobs, TimerSweeper sweeper, KvQuotaRefresh kvQuota,
                   KvSweeper kvSweeper, TlsReloader tlsReloader, SelfWarmup warmup) {
        this.embedded = embedded;
        this.database = database;
        this.wakeChannel = wakeChannel;
        this.server = server;
        this.services = services;
        this.jobs = jobs;
        this.sweeper = sweeper;
        this.kvQuota = kvQuota;
        this.kvSweeper = kvSweeper;
        this.tlsReloader = tlsReloader;
        this.warmup = warmup;
    }

    public static Broker start(BrokerSettings settings) {
        return start(settings, () -> { });
    }

    /** With {@code afterWarmup} run when the warm-up ended, before /ready answers 200 (Main's heap trim). */
    public static Broker start(BrokerSettings settings, Runnable afterWarmup) {
        return start(settings, SchemaApplier.Options.defaults(), MaintenanceSettings.from(Env.system()), afterWarmup);
    }

    public static Broker start(BrokerSettings settings, SchemaApplier.Options schemaOptions) {
        return start(settings, schemaOptions, MaintenanceSettings.from(Env.system()));
    }

    /** With the spool and switch settings given (tests give each broker its own spool folder). */
    public static Broker start(BrokerSettings settings, SchemaApplier.Options schemaOptions,
                               MaintenanceSettings maintenance) {
        return start(settings, schemaOptions, maintenance, () -> { });
    }

    private static Broker start(BrokerSettings settings, SchemaApplier.Options schemaOptions,
                                MaintenanceSettings maintenance, Runnable afterWarmup) {
        EmbeddedDatabase embedded = null;
        Database database = null;
        PgWakeChannel wakeChannel = null;
        Authenticator authenticator = null;
        KvQuotaRefresh kvQuota = null;
        AtomicReference<SelfWarmup> warmup = new AtomicReference<>();
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
            // The one clock the engine's caches, rate buckets and waits read (broker/DESIGN.md, Time).
            WakeHub hub = new WakeHub(Ticker.SYSTEM);
            wakeChannel = new PgWakeChannel(dbSettings, hub, PgWakeChannel.newBrokerId());
            // With JWT on, a JWKS endpoint's keys are fetched before the broker serves.
            authenticator = settings.auth().enabled() ? Authenticator.start(settings.auth()) : null;
            Services services = Services.create(settings, maintenance, database, hub, wakeChannel, authenticator);
            // Items a previous run left in the spool go in before new pushes are taken.
            services.background().spool().recoverAtBoot();
            // Grants and quotas are known before the first KV call (broker/DESIGN.md, KV sweeper and quotas).
            kvQuota = KvQuotaRefresh.start(database, services.kv().quota(), settings.kv().guard());
            ListenerTls listenerTls = settings.tls().enabled() ? bootTls(settings.tls()) : null;
            WebServer server = WebServer.builder()
                    .host(settings.bindAddress())
                    .port(settings.port())
                    .maxPayloadSize(settings.maxBodyBytes())
                    .directHandlers(TransportErrors.handlers(settings.maxBodyBytes()))
                    // Responses go out as headers then body; with Nagle on, the body waits for the
                    // client's delayed ACK (~40 ms on Linux) whenever the response spans writes.
                    .connectionOptions(o -> o.tcpNoDelay(true))
                    // Helidon's NIO socket writes through a fixed 8 KB buffer: a 100-message pop
                    // answer left in 13 writes, each a wake-up for the reader (strace). The plain
                    // socket writes a response in one piece; reads block a virtual thread either way.
                    .useNio(false)
                    .shutdownHook(false)
                    .shutdownGracePeriod(Duration.ofSeconds(20))
                    .routing(r -> routing(r, services, settings, () -> {
                        SelfWarmup w = warmup.get();
                        return w != null && w.ready();
                    }))
                    .update(b -> {
                        if (listenerTls != null) {
                            b.tls(listenerTls.tls());
                        }
                    })
                    .build()
                    .start();
            LOG.info("Queen broker " + Version.VALUE + " listening on " + settings.bindAddress() + ":" + server.port()
                    + " over PostgreSQL " + dbSettings.describe());
            if (authenticator != null) {
                LOG.info("JWT auth enabled: " + settings.auth());
            }
            TlsReloader tlsReloader = null;
            if (listenerTls != null) {
                LOG.info("HTTPS only on port " + server.port() + ": " + settings.tls() + ", serving the " + listenerTls.describe());
                tlsReloader = TlsReloader.start(settings.tls(), server, listenerTls);
            }
            services.background().switches().start();
            services.background().spool().start();
            // Background jobs start once the broker serves (broker/DESIGN.md, Background cycles).
            BackgroundJobs jobs = BackgroundJobs.start(settings.jobs(), database, services.observability().metrics(),
                    hub::waiting, server.port());
            // The timer fire runs on every broker, leaderless (broker/DESIGN.md, Timers).
            TimerSweeper sweeper = TimerSweeper.start(services.background().timerFire(),
                    services.background().timerWake(), settings.timers());
            KvSweeper kvSweeper = KvSweeper.start(database, settings.kv().guard(), settings.timers().sweeper(),
                    services.observability().metrics().surfaces());
            // Last: the warm-up is traffic like any other, and /ready answers 200 once it ended.
            warmup.set(SelfWarmup.start(settings.warmup(), authenticator,
                    listenerTls == null ? null : listenerTls.leaf(), settings.bindAddress(), server.port(), afterWarmup));
            return new Broker(embedded, database, wakeChannel, server, services, jobs, sweeper, kvQuota, kvSweeper,
                    tlsReloader, warmup.get());
        } catch (RuntimeException e) {
            if (kvQuota != null) {
                kvQuota.close();
            }
            if (authenticator != null) {
                authenticator.close();
            }
            if (wakeChannel != null) {
                wakeChannel.close();
            }
            if (database != null) {
                database.close();
            }
            if (embedded != null) {
                embedded.close();
            }
            throw e;
        }
    }

    /** The certificate files at boot: unreadable or mismatched files stop the boot, naming the file. */
    private static ListenerTls bootTls(TlsSettings tls) {
        try {
            return ListenerTls.read(tls);
        } catch (InvalidTlsMaterialException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /**
     * The engine services of one broker, wired explicitly, in the groups the routes and the
     * lifecycle use them by.
     */
    record Services(DataPlane data, Management management, Observability observability, Background background,
                    KvService kv, StreamService streams, TimerService timers,
                    Authenticator auth) {
        static Services create(BrokerSettings settings, MaintenanceSettings maintenance, Database database, WakeHub hub,
                               PgWakeChannel channel, Authenticator auth) {
            PayloadCipher cipher = PayloadCipher.fromHexKey(settings.engine().encryptionKeyHex());
            Ticker clock = hub.ticker();
            QueueCatalog catalog = new QueueCatalog(clock);
            channel.onQueueChanged(catalog::evict);
            PushService push = new PushService(database, catalog, cipher, channel::published,
                    settings.engine().zstdLevel(), DedupCache.entriesFor(settings.engine().dedupCacheMb()));
            AckService ack = new AckService(database, channel::published);
            MaintenanceSwitches switches = MaintenanceSwitches.load(database, maintenance.switchesRefreshMs());
            PopService pop = new PopService(database, catalog, cipher, hub, new PopAutopilot(
                    settings.engine().popAutopilot(), settings.engine().popAutopilotBatch()));
            PushSpool spool = new PushSpool(maintenance, push::push, switches::pushPaused);
            TimerWake timerWake = new TimerWake(clock);
            BrokerMetrics metrics = new BrokerMetrics();
            // One quota view and one set of write buckets for the KV and the timers: one surface, metered once.
            KvQuota kvQuota = new KvQuota(settings.kv().guard());
            KvRates kvRates = new KvRates(settings.kv().guard(), clock);
            KvService kv = new KvService(database, settings.kv(), switches::kvEnabled, kvQuota, kvRates,
                    metrics.surfaces());
            TimerService timers = new TimerService(database, settings.timers(), cipher, switches::timersScheduleEnabled,
                    timerWake, new TimerGate(kvQuota, kvRates), metrics.surfaces());
            DataPlane data = new DataPlane(new PushIntake(push, spool, switches::pushPaused), pop, ack,
                    new TransactionService(database, push, ack, channel::published, kv, timers),
                    new FetchService(database, cipher, hub));
            Management management = new Management(
                    new QueueAdminService(database, catalog, channel::queueChanged, push::forgetPartitions,
                            QueueAdminService.DEFAULT_SAFE_FLOOR_SECONDS),
                    new ConsumerGroupAdminService(database, pop, channel::published),
                    new SeekService(database, channel::published),
                    new DeadLetterService(database, push, cipher),
                    new MessageBrowseService(database, cipher),
                    new TraceService(database),
                    new TenantPurge(database));
            Observability observability = new Observability(metrics, new ObservabilityService(database),
                    new DatabaseHealth(database));
            TimerFire timerFire = new TimerFire(database, push, channel::published, settings.timers(),
                    switches::timersFireEnabled, metrics.surfaces(), clock);
            return new Services(data, management, observability,
                    new Background(hub, switches, spool, timerFire, timerWake),
                    kv,
                    new StreamService(database, push, channel::published, metrics.surfaces()),
                    timers,
                    auth);
        }
    }

    /** The message path: push (to the database or the spool), pop, ack, the transaction route and fetch. */
    record DataPlane(PushIntake intake, PopService pop, AckService ack, TransactionService transactions,
                     FetchService fetch) {
    }

    /** Queue and consumer-group administration, dead letters, browsing, traces and the tenant purge. */
    record Management(QueueAdminService queues, ConsumerGroupAdminService groups, SeekService seeks,
                      DeadLetterService deadLetters, MessageBrowseService messages, TraceService traces,
                      TenantPurge tenantPurge) {
    }

    /** The process counters, the database-backed status and analytics, and the database's health. */
    record Observability(BrokerMetrics metrics, ObservabilityService reports, DatabaseHealth health) {
    }

    /**
     * What lives beside the requests with a start or a stop of its own: the wake hub (released at
     * shutdown), the maintenance switches (refresh loop), the push spool (boot recovery, drain), and
     * the timer fire with the hint a local schedule rings it by (the sweeper's loop).
     */
    record Background(WakeHub hub, MaintenanceSwitches switches, PushSpool spool, TimerFire timerFire,
                      TimerWake timerWake) {
    }

    static void routing(HttpRouting.Builder routing, Services s, BrokerSettings settings, BooleanSupplier warm) {
        Tenancy tenancy = new Tenancy(settings.tenancyHeader());
        PopHttpService.PopDefaults popDefaults = new PopHttpService.PopDefaults(
                settings.engine().popDefaultTimeoutMs(), settings.engine().defaultSubscriptionMode());
        DataPlane data = s.data();
        Management m = s.management();
        Observability o = s.observability();
        Background b = s.background();
        ErrorMapping.register(routing);
        routing.addFilter(new RequestTextFilter());
        if (s.auth() != null) {
            // After the path is known to be text, before anything else (broker/DESIGN.md, Authentication).
            routing.addFilter(new AuthFilter(s.auth()));
        }
        routing.register(new HealthHttpService(o.health(), warm));
        routing.register(new AuthHttpService(settings.auth().enabled(), settings.jobs().serverId()));
        routing.register("/api/v1", new PushHttpService(data.intake(), o.metrics(), tenancy));
        routing.register("/api/v1", new PopHttpService(data.pop(), b.switches(), o.metrics(), popDefaults, tenancy));
        routing.register("/api/v1", new AckHttpService(data.ack(), o.metrics(), tenancy));
        routing.register("/api/v1", new LeaseHttpService(data.ack(), tenancy));
        routing.register("/api/v1", new TransactionHttpService(data.transactions(), tenancy));
        routing.register("/api/v1", new DeadLetterHttpService(m.deadLetters(), b.switches(), tenancy));
        routing.register("/api/v1", new ConsumerGroupHttpService(m.seeks(), tenancy));
        routing.register("/api/v1", new FetchHttpService(data.fetch(), tenancy));
        // Management plane (broker/DESIGN.md, Management plane): one registration per service, below this line.
        routing.register("/api/v1", new SystemHttpService(b.switches(), b.spool(), m.tenantPurge()));
        routing.register("/api/v1", new QueueHttpService(m.queues(), tenancy));
        routing.register("/api/v1", new ConsumerGroupAdminHttpService(m.groups(), tenancy));
        routing.register("/api/v1", new MessagesHttpService(m.messages(), tenancy));
        routing.register("/api/v1", new TracesHttpService(m.traces(), tenancy));
        routing.register("/api/v1", new KvHttpService(s.kv(), tenancy));
        routing.register("/streams/v1", new StreamsHttpService(s.streams(), tenancy));
        routing.register("/api/v1", new TimerHttpService(s.timers(), tenancy));
        MetricsHttpService.install(routing, o.metrics(), o.health(), o.reports(), b.switches(), b.spool());
        routing.register("/api/v1", new StatusHttpService(o.reports(), b.spool(), o.health(), tenancy));
        routing.register("/api/v1/analytics", new AnalyticsHttpService(o.reports(), tenancy));
        routing.any("/api/*", (req, res) ->
                Json.send(res, Status.NOT_FOUND_404, Json.object().put("error", "Not Found").put("code", "no_such_route")));
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
        warmup.close();
        int released = services.background().hub().close();
        LOG.info("shutting down: " + released + " parked long-poll(s) released, draining in-flight requests");
        if (sweeper != null) {
            sweeper.close();
        }
        if (kvSweeper != null) {
            kvSweeper.close();
        }
        kvQuota.close();
        jobs.close();
        if (tlsReloader != null) {
            tlsReloader.close();
        }
        server.stop();
        services.background().spool().close();
        services.background().switches().close();
        if (services.auth() != null) {
            services.auth().close();
        }
        wakeChannel.close();
        database.close();
        if (embedded != null) {
            embedded.close();
        }
        LOG.info("shutdown complete");
    }
}
