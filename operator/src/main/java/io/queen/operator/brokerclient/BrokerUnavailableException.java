package io.queen.operator.brokerclient;

/**
 * Transient: the broker could not be reached, timed out, or answered 5xx (503 while it starts or
 * drains). The same call may succeed later, so the caller retries with backoff.
 */
public final class BrokerUnavailableException extends BrokerException {
    public BrokerUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
