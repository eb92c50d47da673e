package io.queen.broker;

import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.ConfigException;
import io.queen.broker.config.Env;
import io.queen.broker.config.HeapTrimSettings;
import io.queen.broker.memory.HeapTrimmer;
import io.queen.broker.store.Database;
import io.queen.broker.store.SchemaApplier;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Entry point. No argument (or {@code serve}) runs the broker; {@code apply-schema} applies the
 * schema and exits 0 (the operator's privileged Job runs it); {@code migrate} is the reference's
 * retired stub and exits 1 without touching a database.
 */
public final class Main {
    static {
        // Must run before the first Logger is created; see BrokerLogManager.
        System.setProperty("java.util.logging.manager", BrokerLogManager.class.getName());
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$-7s %3$s - %5$s%6$s%n");
        System.setProperty("user.timezone", "UTC");
    }

    private static final Logger LOG = Logger.getLogger(Main.class.getName());
    // Held strongly: JUL keeps loggers weakly, and a collected logger forgets its level.
    private static final java.util.List<Logger> QUIETED = java.util.List.of(
            Logger.getLogger("com.zaxxer.hikari"), Logger.getLogger("io.zonky"));

    private Main() {
    }

    public static void main(String[] args) {
        int code = run(args, Env.system());
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Returns the process exit code; for {@code serve} the broker keeps running after a 0. */
    static int run(String[] args, Env env) {
        String command = args.length == 0 ? "serve" : args[0];
        if (command.equals("migrate")) {
            configureLogging(Level.INFO);
            LOG.severe("migration is not supported on the log engine");
            return 1;
        }
        BrokerSettings settings;
        HeapTrimSettings heapTrim;
        try {
            settings = BrokerSettings.from(env);
            heapTrim = HeapTrimSettings.from(env);
        } catch (ConfigException e) {
            configureLogging(Level.INFO);
            LOG.severe("configuration error: " + e.getMessage());
            return 2;
        }
        configureLogging(settings.logLevel());
        LOG.info("Queen broker " + Version.VALUE + " (" + (settings.database().embedded()
                ? "development mode, embedded PostgreSQL" : "production mode") + ")");
        try {
            switch (command) {
                case "serve" -> {
                    // Process-wide, so here and not in Broker (broker/DESIGN.md, Memory and start-up).
                    // Started first: the warm-up's end trims the heap its pushes grew, before /ready.
                    HeapTrimmer trimmer = HeapTrimmer.start(heapTrim);
                    Broker broker;
                    try {
                        broker = Broker.start(settings,
                                trimmer == null ? () -> { } : () -> trimmer.trimNow("the warm-up ended"));
                    } catch (RuntimeException e) {
                        if (trimmer != null) {
                            trimmer.close();
                        }
                        throw e;
                    }
                    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                        if (trimmer != null) {
                            trimmer.close();
                        }
                        broker.close();
                    }, "queen-shutdown"));
                    return 0;
                }
                case "apply-schema" -> {
                    if (settings.database().embedded()) {
                        LOG.severe("apply-schema needs PG_HOST (it is meant for the privileged schema Job)");
                        return 2;
                    }
                    try (Database db = Database.open(settings.database())) {
                        new SchemaApplier(db.dataSource()).apply();
                    }
                    return 0;
                }
                default -> {
                    LOG.severe("unknown command \"" + command + "\"; expected serve, apply-schema or migrate");
                    return 2;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "startup failed: " + e.getMessage(), LOG.isLoggable(Level.FINE) ? e : null);
            return 1;
        }
    }

    static void configureLogging(Level level) {
        Logger root = Logger.getLogger("");
        root.setLevel(level);
        for (var h : root.getHandlers()) {
            h.setLevel(level);
        }
        // Third-party chatter stays at INFO or above unless debugging is asked for.
        if (level.intValue() < Level.INFO.intValue()) {
            return;
        }
        QUIETED.forEach(l -> l.setLevel(Level.WARNING));
    }
}
