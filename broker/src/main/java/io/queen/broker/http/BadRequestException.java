package io.queen.broker.http;

/** The client sent something the broker cannot accept; answered 400 with the message. */
public final class BadRequestException extends RuntimeException {
    public BadRequestException(String message) {
        super(message);
    }
}
