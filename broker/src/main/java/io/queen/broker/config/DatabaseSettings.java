package io.queen.broker.config;

/**
 * Where the broker's PostgreSQL is. {@code embedded} is the development mode: no PG_HOST was given,
 * so the broker starts its own PostgreSQL with its data in {@code embeddedDataDir}.
 */
public record DatabaseSettings(
        String host,
        int port,
        String user,
        String password,
        String database,
        boolean ssl,
        boolean sslRejectUnauthorized,
        int poolSize,
        long statementTimeoutMs,
        boolean embedded,
        String embeddedDataDir) {

    public String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }

    /** For log lines and error messages: never carries the password. */
    public String describe() {
        return user + "@" + host + ":" + port + "/" + database;
    }

    public DatabaseSettings withEndpoint(String newHost, int newPort, String newUser, String newPassword, String newDatabase) {
        return new DatabaseSettings(newHost, newPort, newUser, newPassword, newDatabase, ssl, sslRejectUnauthorized,
                poolSize, statementTimeoutMs, embedded, embeddedDataDir);
    }
}
