package io.queen.operator.brokerclient;

/**
 * A call that the operator's setup keeps from getting through: its credentials (refused, or not
 * sent) or its trust in the broker's certificate. Repeating the call as it is cannot help; a fixed
 * Secret or setting will, so callers show {@link #reason()} on the resource and look again after a
 * while instead of retrying fast.
 */
public abstract sealed class BrokerSetupException extends BrokerException
        permits BrokerCredentialsException, BrokerTlsException {
    private final String reason;
    private final boolean brokerAnswered;

    protected BrokerSetupException(String reason, boolean brokerAnswered, String message) {
        super(message, null);
        this.reason = reason;
        this.brokerAnswered = brokerAnswered;
    }

    /** The condition reason to show (the subclasses' constants). */
    public String reason() {
        return reason;
    }

    /** True when the broker answered (a 401/403: it is reachable), false when nothing got to it. */
    public boolean brokerAnswered() {
        return brokerAnswered;
    }
}
