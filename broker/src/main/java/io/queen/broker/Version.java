package io.queen.broker;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The release whose contract we implement, compiled in from the root pom's {@code revision}. */
public final class Version {
    public static final String VALUE = load();

    private Version() {
    }

    private static String load() {
        try (InputStream in = Version.class.getClassLoader().getResourceAsStream("queen-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("queen-version.properties missing from the broker jar");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
