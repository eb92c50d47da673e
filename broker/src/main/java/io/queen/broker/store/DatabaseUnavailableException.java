package io.queen.broker.store;

/** The database cannot be reached or has stopped answering; callers answer 503 or stop the boot. */
public final class DatabaseUnavailableException extends RuntimeException {
    public DatabaseUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
