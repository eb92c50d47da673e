package io.queen.operator.brokerclient;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.Optional;

/**
 * What the operator proves itself with to the broker: the bearer token of the next call, or none
 * (a broker without authentication). Implementations never put a token or key in a message.
 */
public interface BrokerCredentials {

    /** No credentials: the broker must have authentication off. */
    BrokerCredentials NONE = new BrokerCredentials() {
        @Override
        public Optional<String> bearerToken() {
            return Optional.empty();
        }

        @Override
        public String describe() {
            return "no credentials (set QUEEN_OPERATOR_TOKEN_FILE, QUEEN_OPERATOR_TOKEN or QUEEN_OPERATOR_JWT_SECRET"
                    + " when the broker has JWT_ENABLED=true)";
        }
    };

    /**
     * The token for the next call, or empty for none.
     *
     * @throws BrokerCredentialsException when there should be a token but it cannot be had or sent
     */
    Optional<String> bearerToken();

    /** The broker refused the last token (401): a cached token is dropped so that the next call gets a new one. */
    default void refused() {
    }

    /** Where the token comes from, for conditions and logs; never the token or the key. */
    String describe();

    /** The credentials the settings name, guarded against plain HTTP to a non-loopback broker. */
    static BrokerCredentials from(CredentialSettings settings, URI brokerUrl, Clock clock) {
        BrokerCredentials credentials = switch (settings.source()) {
            case NONE -> NONE;
            case TOKEN -> new StaticToken(settings.token());
            case TOKEN_FILE -> new TokenFile(settings.tokenFile());
            case SIGNED -> new AdminTokenSigner(settings.signing(), clock);
        };
        if (credentials == NONE || settings.allowInsecure() || !sentInClear(brokerUrl)) {
            return credentials;
        }
        return new RefusedOverPlainHttp(credentials, brokerUrl);
    }

    /**
     * Whether a token sent to this URL can be read on the way: plain HTTP to anything but a
     * loopback address. Only literal addresses and {@code localhost} count as loopback; a name is
     * not resolved here, since what it resolves to may change.
     */
    static boolean sentInClear(URI url) {
        if (!"http".equalsIgnoreCase(url.getScheme())) {
            return false;
        }
        String host = url.getHost();
        if (host.equalsIgnoreCase("localhost")) {
            return false;
        }
        String literal = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (!literal.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            return true;
        }
        try {
            return !InetAddress.getByName(literal).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return true;
        }
    }
}
