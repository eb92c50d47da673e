package io.queen.broker.store;

/** The boot-time schema apply could not bring the database to this version's shape. */
public final class SchemaApplyException extends RuntimeException {
    public SchemaApplyException(String message, Throwable cause) {
        super(message, cause);
    }

    public SchemaApplyException(String message) {
        super(message);
    }
}
