package io.queen.operator.brokerclient;

import java.net.URI;
import java.util.Optional;

/**
 * Holds back the real credentials when the broker URL is plain HTTP to a non-loopback host and
 * nobody allowed that: every call fails before anything is sent, with a message that says what to
 * set. The operator keeps running, so the refusal shows on each resource instead of a crash loop.
 */
final class RefusedOverPlainHttp implements BrokerCredentials {
    private final BrokerCredentials held;
    private final URI brokerUrl;

    RefusedOverPlainHttp(BrokerCredentials held, URI brokerUrl) {
        this.held = held;
        this.brokerUrl = brokerUrl;
    }

    @Override
    public Optional<String> bearerToken() {
        throw new BrokerCredentialsException(BrokerCredentialsException.INSECURE, false,
                "not sending the operator's admin token (" + held.describe() + ") over plain HTTP to " + brokerUrl.getHost()
                        + ": anyone on the network path could read it. Use an https QUEEN_BROKER_URL, or accept clear"
                        + " text inside the cluster with QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS=true"
                        + " (the chart's auth.operator.allowInsecureCredentials)");
    }

    @Override
    public String describe() {
        return held.describe() + ", refused over plain HTTP";
    }
}
