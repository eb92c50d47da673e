package io.queen.operator.brokerclient;

/** A broker call that did not do what was asked. Callers catch the subclass that says what to do next. */
public abstract sealed class BrokerException extends RuntimeException
        permits BrokerUnavailableException, BrokerRejectedException, BrokerSetupException {
    protected BrokerException(String message, Throwable cause) {
        super(message, cause);
    }
}
