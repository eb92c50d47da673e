package io.queen.broker.config;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TlsSettingsTest {
    @Test
    void offUnlessBothFilesAreNamed() {
        assertFalse(TlsSettings.from(new Env(Map.of())).enabled());
        TlsSettings on = TlsSettings.from(new Env(Map.of("QUEEN_TLS_CERT_FILE", "/tls/tls.crt",
                "QUEEN_TLS_KEY_FILE", "/tls/tls.key")));
        assertTrue(on.enabled());
        assertEquals(Path.of("/tls/tls.crt"), on.certFile());
        assertEquals(Duration.ofSeconds(30), on.reloadInterval(), "default re-read interval");
    }

    @Test
    void oneFileWithoutTheOtherStopsTheBootNamingTheMissingVariable() {
        ConfigException noKey = assertThrows(ConfigException.class,
                () -> TlsSettings.from(new Env(Map.of("QUEEN_TLS_CERT_FILE", "/tls/tls.crt"))));
        assertTrue(noKey.getMessage().startsWith("QUEEN_TLS_KEY_FILE"), noKey.getMessage());
        ConfigException noCert = assertThrows(ConfigException.class,
                () -> TlsSettings.from(new Env(Map.of("QUEEN_TLS_KEY_FILE", "/tls/tls.key"))));
        assertTrue(noCert.getMessage().startsWith("QUEEN_TLS_CERT_FILE"), noCert.getMessage());
    }

    @Test
    void theReloadIntervalIsBounded() {
        assertThrows(ConfigException.class, () -> TlsSettings.from(new Env(Map.of("QUEEN_TLS_RELOAD_INTERVAL_MS", "5"))));
    }
}
