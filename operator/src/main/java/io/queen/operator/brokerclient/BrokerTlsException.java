package io.queen.operator.brokerclient;

/**
 * Nothing was sent: the operator could not trust the broker's certificate on an https
 * {@code QUEEN_BROKER_URL}, or could not read the CA it trusts it with. A fixed CA Secret or
 * broker certificate is picked up at the next look, without a restart.
 */
public final class BrokerTlsException extends BrokerSetupException {
    /** {@code QUEEN_BROKER_CA_FILE} cannot be read or holds no PEM certificate. */
    public static final String CA_UNAVAILABLE = "BrokerCaUnavailable";
    /** The broker's certificate failed the check: not issued by a trusted CA, expired, or not for the URL's host. */
    public static final String UNTRUSTED = "BrokerCertificateUntrusted";

    public BrokerTlsException(String reason, String message) {
        super(reason, false, message);
    }
}
