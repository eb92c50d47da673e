package io.queen.broker.http;

/** The named resource does not exist; answered 404 with the message. */
public final class NotFoundException extends RuntimeException {
    public NotFoundException(String message) {
        super(message);
    }
}
