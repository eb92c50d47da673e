package io.queen.broker.config;

import java.util.Locale;
import java.util.logging.Level;

/**
 * Every setting the broker reads, validated once at start. Names and defaults are the reference
 * Queen broker's, so a deployment of it carries over unchanged.
 */
public record BrokerSettings(
        int port,
        String bindAddress,
        long maxBodyBytes,
        boolean applySchema,
        Level logLevel,
        DatabaseSettings database,
        EngineSettings engine,
        boolean tenancyHeader,
        AuthSettings auth,
        JobSettings jobs,
        KvSettings kv,
        TimerSettings timers,
        TlsSettings tls,
        WarmupSettings warmup) {

    /** Default development data folder, relative to the working directory. */
    public static final String DEFAULT_DEV_DATA_DIR = ".queen-dev/pgdata";

    public static BrokerSettings fromEnvironment() {
        return from(Env.system());
    }

    public static BrokerSettings from(Env env) {
        int port = env.integer("PORT", 6632, 0, 65535);
        String bind = env.string("QUEEN_BIND_ADDR", "0.0.0.0").trim();
        if (bind.contains(":") && !bind.startsWith("[") && bind.chars().filter(c -> c == ':').count() == 1) {
            throw Env.invalid("QUEEN_BIND_ADDR", bind, "a host only, the port comes from PORT");
        }
        long maxBody = env.longValue("QUEEN_MAX_BODY_BYTES", 64L * 1024 * 1024, 1024, Integer.MAX_VALUE);
        boolean applySchema = env.bool("QUEEN_APPLY_SCHEMA", true);
        Level level = logLevel(env);

        // Production is any explicit PG_HOST, or an image that says so; only then is a missing
        // database an error instead of a reason to start an embedded one.
        boolean production = env.isSet("PG_HOST") || env.bool("QUEEN_PRODUCTION", false);
        String database = env.string("PG_DATABASE", env.string("PG_DB", "postgres"));
        DatabaseSettings db = new DatabaseSettings(
                env.string("PG_HOST", "localhost"),
                env.integer("PG_PORT", 5432, 1, 65535),
                env.string("PG_USER", "postgres"),
                env.string("PG_PASSWORD", "postgres"),
                database,
                env.bool("PG_USE_SSL", false),
                env.bool("PG_SSL_REJECT_UNAUTHORIZED", true),
                env.integer("DB_POOL_SIZE", 160, 2, 10_000),
                env.longValue("QUEEN_STMT_TIMEOUT_MS", 30_000, 0, 86_400_000),
                !production,
                env.string("QUEEN_DEV_DATA_DIR", DEFAULT_DEV_DATA_DIR));
        boolean tenancy = env.bool("QUEEN_TENANCY_HEADER", false);
        // Reference boot interlock: tenant-scoped traffic must come through a trusted proxy, because
        // some state (KV) is addressable by name alone.
        if (tenancy && !env.bool("QUEEN_KV_TRUSTED_PROXY", false)) {
            throw new ConfigException("QUEEN_TENANCY_HEADER=true requires QUEEN_KV_TRUSTED_PROXY=true"
                    + " (the x-queen-tenant header must only come from a trusted proxy)");
        }
        return new BrokerSettings(port, bind, maxBody, applySchema, level, db, EngineSettings.from(env), tenancy,
                AuthSettings.from(env), JobSettings.from(env), KvSettings.from(env), TimerSettings.from(env),
                TlsSettings.from(env), WarmupSettings.from(env));
    }

    public BrokerSettings withDatabase(DatabaseSettings newDatabase) {
        return new BrokerSettings(port, bindAddress, maxBodyBytes, applySchema, logLevel, newDatabase, engine,
                tenancyHeader, auth, jobs, kv, timers, tls, warmup);
    }

    public BrokerSettings withPort(int newPort) {
        return new BrokerSettings(newPort, bindAddress, maxBodyBytes, applySchema, logLevel, database, engine,
                tenancyHeader, auth, jobs, kv, timers, tls, warmup);
    }

    private static Level logLevel(Env env) {
        // RUST_LOG wins in the reference broker; accept it for drop-in compatibility.
        String name = env.isSet("RUST_LOG") ? "RUST_LOG" : "LOG_LEVEL";
        String raw = env.string(name, "info");
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "trace" -> Level.FINEST;
            case "debug" -> Level.FINE;
            case "info" -> Level.INFO;
            case "warn", "warning" -> Level.WARNING;
            case "error" -> Level.SEVERE;
            case "off" -> Level.OFF;
            default -> throw Env.invalid(name, raw, "expected trace, debug, info, warn, error or off");
        };
    }
}
