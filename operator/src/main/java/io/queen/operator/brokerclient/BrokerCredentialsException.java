package io.queen.operator.brokerclient;

/**
 * The operator's credentials did not get a call through: the broker refused them (401, 403), or the
 * operator would not send them (plain HTTP to a non-loopback broker without the allowance, a token
 * file that cannot be read). Repeating the call as it is cannot help; a fixed Secret or setting
 * will, so callers report it and look again after a while instead of retrying fast.
 */
public final class BrokerCredentialsException extends BrokerSetupException {
    /** The broker answered 401: no token, or a token it does not accept. */
    public static final String UNAUTHORIZED = "BrokerUnauthorized";
    /** The broker answered 403: the token is valid but its role is not admin. */
    public static final String FORBIDDEN = "BrokerForbidden";
    /** Not sent: plain HTTP to a non-loopback broker without QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS. */
    public static final String INSECURE = "InsecureCredentialsRefused";
    /** Not sent: the token could not be read or made. */
    public static final String UNAVAILABLE = "CredentialsUnavailable";

    public BrokerCredentialsException(String reason, boolean brokerAnswered, String message) {
        super(reason, brokerAnswered, message);
    }
}
