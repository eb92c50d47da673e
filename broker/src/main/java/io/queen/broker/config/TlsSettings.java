package io.queen.broker.config;

import java.nio.file.Path;
import java.time.Duration;

/**
 * TLS on the broker's own listener: a PEM certificate chain and a PEM private key read from files,
 * read again every {@code reloadInterval} so a renewed certificate (a cert-manager Secret mounted as
 * a volume) is served without a restart. Off unless both files are named. The reference broker has
 * no listener TLS (it sits behind a proxy or a mesh), so these names are this broker's own.
 */
public record TlsSettings(Path certFile, Path keyFile, Duration reloadInterval) {
    public static final String CERT_FILE = "QUEEN_TLS_CERT_FILE";
    public static final String KEY_FILE = "QUEEN_TLS_KEY_FILE";
    public static final String RELOAD_INTERVAL = "QUEEN_TLS_RELOAD_INTERVAL_MS";

    public static TlsSettings off() {
        return new TlsSettings(null, null, Duration.ofSeconds(30));
    }

    public static TlsSettings from(Env env) {
        String cert = env.string(CERT_FILE, "").trim();
        String key = env.string(KEY_FILE, "").trim();
        if (cert.isEmpty() != key.isEmpty()) {
            String missing = cert.isEmpty() ? CERT_FILE : KEY_FILE;
            throw new ConfigException(missing + " must be set too: TLS needs both a certificate chain ("
                    + CERT_FILE + ") and its private key (" + KEY_FILE + ")");
        }
        long reloadMs = env.longValue(RELOAD_INTERVAL, 30_000, 100, 86_400_000);
        if (cert.isEmpty()) {
            return new TlsSettings(null, null, Duration.ofMillis(reloadMs));
        }
        return new TlsSettings(Path.of(cert), Path.of(key), Duration.ofMillis(reloadMs));
    }

    public boolean enabled() {
        return certFile != null;
    }

    @Override
    public String toString() {
        return enabled() ? "TLS with " + certFile + " and " + keyFile + " (re-read every " + reloadInterval.toMillis()
                + " ms)" : "no TLS";
    }
}
