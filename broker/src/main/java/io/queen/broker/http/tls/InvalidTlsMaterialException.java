package io.queen.broker.http.tls;

/** The listener's certificate or key files cannot be served; the message names the file, never its content. */
public final class InvalidTlsMaterialException extends RuntimeException {
    public InvalidTlsMaterialException(String message) {
        super(message);
    }

    public InvalidTlsMaterialException(String message, Throwable cause) {
        super(message, cause);
    }
}
