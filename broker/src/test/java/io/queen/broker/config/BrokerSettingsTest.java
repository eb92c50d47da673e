package io.queen.broker.config;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.logging.Level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BrokerSettingsTest {

    @Test
    void defaultsAreTheReferenceBrokersAndDevelopmentModeWithoutPgHost() {
        BrokerSettings s = BrokerSettings.from(new Env(Map.of()));
        assertEquals(6632, s.port());
        assertEquals("0.0.0.0", s.bindAddress());
        assertEquals(67_108_864L, s.maxBodyBytes());
        assertTrue(s.applySchema());
        assertEquals(Level.INFO, s.logLevel());
        assertEquals(160, s.database().poolSize());
        assertEquals("postgres", s.database().database());
        assertTrue(s.database().embedded());
    }

    @Test
    void theDedupCacheBudgetIsSetInMegabytesAndCanBeSwitchedOff() {
        assertEquals(64, BrokerSettings.from(new Env(Map.of("QUEEN_DEDUP_CACHE_MB", "64"))).engine().dedupCacheMb());
        assertEquals(0, BrokerSettings.from(new Env(Map.of("QUEEN_DEDUP_CACHE", "false", "QUEEN_DEDUP_CACHE_MB", "64")))
                .engine().dedupCacheMb());
        // The reference's 512 MB, unless the heap is small: then a sixteenth of it.
        assertEquals(512, EngineSettings.defaultDedupCacheMb(8L << 30));
        assertEquals(6, EngineSettings.defaultDedupCacheMb(102L << 20));
        assertEquals(EngineSettings.defaultDedupCacheMb(Runtime.getRuntime().maxMemory()),
                BrokerSettings.from(new Env(Map.of())).engine().dedupCacheMb());
    }

    @Test
    void kvLimitsHaveTheReferenceNamesAndDefaultsAndRefuseWhatTheSqlCannotKeep() {
        KvSettings kv = BrokerSettings.from(new Env(Map.of())).kv();
        assertEquals(new KvSettings(65_536, 512, 256, 1_024, 4_194_304L, 1_000), kv);
        assertEquals(kv, KvSettings.defaults());
        KvSettings set = BrokerSettings.from(new Env(Map.of("QUEEN_KV_MAX_VALUE_BYTES", "1024",
                "QUEEN_KV_PREFIX_LIMIT", "50", "QUEEN_KV_MAX_OPS_PER_CALL", "8", "QUEEN_KV_MAX_KEYS_PER_CALL", "64",
                "QUEEN_KV_MAX_READ_BYTES", "2048", "QUEEN_KV_MAX_KEY_BYTES", "100"))).kv();
        assertEquals(new KvSettings(1_024, 100, 8, 64, 2_048L, 50), set);
        ConfigException key = assertThrows(ConfigException.class,
                () -> BrokerSettings.from(new Env(Map.of("QUEEN_KV_MAX_KEY_BYTES", "513"))));
        assertTrue(key.getMessage().contains("QUEEN_KV_MAX_KEY_BYTES"), key.getMessage());
        assertThrows(ConfigException.class, () -> BrokerSettings.from(new Env(Map.of("QUEEN_KV_PREFIX_LIMIT", "5000"))));
        assertThrows(ConfigException.class, () -> BrokerSettings.from(new Env(Map.of("QUEEN_KV_MAX_VALUE_BYTES", "big"))));
    }

    @Test
    void anExplicitPgHostIsProductionMode() {
        BrokerSettings s = BrokerSettings.from(new Env(Map.of("PG_HOST", "db.internal", "PG_PORT", "6543")));
        assertFalse(s.database().embedded());
        assertEquals("jdbc:postgresql://db.internal:6543/postgres", s.database().jdbcUrl());
    }

    @Test
    void theImageFlagIsProductionModeEvenWithoutPgHost() {
        assertFalse(BrokerSettings.from(new Env(Map.of("QUEEN_PRODUCTION", "1"))).database().embedded());
    }

    @Test
    void pgDatabaseFallsBackToPgDb() {
        assertEquals("legacy", BrokerSettings.from(new Env(Map.of("PG_DB", "legacy"))).database().database());
        assertEquals("new", BrokerSettings.from(new Env(Map.of("PG_DB", "legacy", "PG_DATABASE", "new")))
                .database().database());
    }

    @Test
    void booleansAcceptTheReferenceSpellings() {
        for (String off : new String[] {"0", "false", "NO", "Off"}) {
            assertFalse(BrokerSettings.from(new Env(Map.of("QUEEN_APPLY_SCHEMA", off))).applySchema(), off);
        }
        for (String on : new String[] {"1", "TRUE", "yes", "on"}) {
            assertTrue(BrokerSettings.from(new Env(Map.of("QUEEN_APPLY_SCHEMA", on))).applySchema(), on);
        }
    }

    @Test
    void anEmptyValueMeansTheDefault() {
        assertEquals(6632, BrokerSettings.from(new Env(Map.of("PORT", ""))).port());
    }

    @Test
    void badValuesNameTheVariableAndTheValue() {
        assertBad("PORT", "http", "PORT=\"http\"");
        assertBad("PORT", "70000", "PORT=\"70000\"");
        assertBad("QUEEN_APPLY_SCHEMA", "maybe", "QUEEN_APPLY_SCHEMA=\"maybe\"");
        assertBad("DB_POOL_SIZE", "-3", "DB_POOL_SIZE=\"-3\"");
        assertBad("QUEEN_MAX_BODY_BYTES", "lots", "QUEEN_MAX_BODY_BYTES=\"lots\"");
        assertBad("LOG_LEVEL", "chatty", "LOG_LEVEL=\"chatty\"");
        assertBad("QUEEN_BIND_ADDR", "0.0.0.0:80", "QUEEN_BIND_ADDR=\"0.0.0.0:80\"");
    }

    @Test
    void tenancyHeaderWithoutTheTrustedProxyFlagIsRefused() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> BrokerSettings.from(new Env(Map.of("QUEEN_TENANCY_HEADER", "true"))));
        assertTrue(e.getMessage().contains("QUEEN_KV_TRUSTED_PROXY"), e.getMessage());
        assertTrue(BrokerSettings.from(new Env(Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "1")))
                .tenancyHeader());
        assertFalse(BrokerSettings.from(new Env(Map.of())).tenancyHeader());
    }

    @Test
    void rustLogWinsOverLogLevel() {
        assertEquals(Level.FINE, BrokerSettings.from(new Env(Map.of("LOG_LEVEL", "error", "RUST_LOG", "debug"))).logLevel());
    }

    private static void assertBad(String name, String value, String expected) {
        ConfigException e = assertThrows(ConfigException.class, () -> BrokerSettings.from(new Env(Map.of(name, value))));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void popAutopilotIsOnShadowOrOffAndAnythingElseStopsTheBoot() {
        assertEquals(EngineSettings.AutopilotMode.ON, autopilot(null));
        assertEquals(EngineSettings.AutopilotMode.ON, autopilot("yes"));
        assertEquals(EngineSettings.AutopilotMode.SHADOW, autopilot("shadow"));
        assertEquals(EngineSettings.AutopilotMode.SHADOW, autopilot(" Dry-Run "));
        assertEquals(EngineSettings.AutopilotMode.OFF, autopilot("0"));
        assertEquals(EngineSettings.AutopilotMode.OFF, autopilot("off"));
        ConfigException e = assertThrows(ConfigException.class, () -> autopilot("maybe"));
        assertTrue(e.getMessage().contains("QUEEN_POP_AUTOPILOT"), e.getMessage());
    }

    private static EngineSettings.AutopilotMode autopilot(String value) {
        return BrokerSettings.from(new Env(value == null ? Map.of() : Map.of("QUEEN_POP_AUTOPILOT", value)))
                .engine().popAutopilot();
    }
}
