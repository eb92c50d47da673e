package io.queen.operator.brokerclient;

/**
 * Permanent: the broker understood the request and refused it (400 and other 4xx). Sending the
 * same request again cannot help; the message is the broker's own text, for the user.
 */
public final class BrokerRejectedException extends BrokerException {
    private final int statusCode;
    private final String brokerMessage;

    public BrokerRejectedException(int statusCode, String brokerMessage) {
        super("broker answered " + statusCode + ": " + brokerMessage, null);
        this.statusCode = statusCode;
        this.brokerMessage = brokerMessage;
    }

    public int statusCode() {
        return statusCode;
    }

    public String brokerMessage() {
        return brokerMessage;
    }
}
