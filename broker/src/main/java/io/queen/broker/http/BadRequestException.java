package io.queen.broker.http;

/**
 * The client sent something the broker cannot accept; answered 400 with the message, which names
 * the field and the rule (it never carries text from the database or the JVM).
 */
public class BadRequestException extends RuntimeException {
    public BadRequestException(String message) {
        super(message, null, false, false);
    }

    /** The stable {@code code} of the answer, next to the human-readable {@code error}. */
    public String code() {
        return "bad_request";
    }

    /** Whether the connection must be closed after the answer (the request's framing cannot be trusted). */
    public boolean closesConnection() {
        return false;
    }
}
