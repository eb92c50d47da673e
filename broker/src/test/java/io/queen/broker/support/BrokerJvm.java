package io.queen.broker.support;

import io.queen.broker.Main;
import io.queen.broker.config.DatabaseSettings;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

/**
 * A broker in a JVM of its own, on the test's classpath, for tests that kill it outright (SIGKILL:
 * no shutdown hook, open transactions and claims left behind) and start another on what it left.
 */
public final class BrokerJvm {
    private BrokerJvm() {
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Starts it on {@code db} and {@code port} with its spool in {@code spool}, logging to {@code log}. */
    public static Process start(DatabaseSettings db, int port, Path spool, Path log, Map<String, String> extraEnv)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                Main.class.getName());
        Map<String, String> env = pb.environment();
        env.put("PG_HOST", db.host());
        env.put("PG_PORT", String.valueOf(db.port()));
        env.put("PG_USER", db.user());
        env.put("PG_PASSWORD", db.password());
        env.put("PG_DATABASE", db.database());
        env.put("PORT", String.valueOf(port));
        env.put("DB_POOL_SIZE", "8");
        env.put("FILE_BUFFER_DIR", spool.toString());
        env.putAll(extraEnv);
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        return pb.start();
    }
}
