package io.queen.operator.brokerclient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

/**
 * The HTTP client the broker is called with. Plain HTTP, or https trusting the JDK's default trust
 * store, or https trusting only the CA certificates in {@code QUEEN_BROKER_CA_FILE}. That file is a
 * mounted Secret or ConfigMap: it is read before every call (a few kilobytes, next to an HTTP call)
 * and the client is rebuilt when its bytes change, so a rotated CA is trusted without a restart.
 * The JDK client checks the broker's certificate against the URL's host name on every handshake.
 * Redirects are never followed: the token must go only to the broker that was named.
 */
final class BrokerTransport {
    private final URI baseUrl;
    private final Path caFile;
    private final Duration connectTimeout;
    private byte[] loadedCa;
    private HttpClient client;

    /** {@code caFile}: null for the JDK's default trust store; only used with an https URL. */
    BrokerTransport(URI baseUrl, Path caFile, Duration connectTimeout) {
        this.baseUrl = baseUrl;
        this.caFile = "https".equalsIgnoreCase(baseUrl.getScheme()) ? caFile : null;
        this.connectTimeout = connectTimeout;
        if (this.caFile == null) {
            this.client = builder().build();
        }
    }

    /**
     * The client for the next call.
     *
     * @throws BrokerTlsException when the CA file cannot be read or holds no certificate
     */
    synchronized HttpClient client() {
        if (caFile == null) {
            return client;
        }
        byte[] ca;
        try {
            ca = Files.readAllBytes(caFile);
        } catch (IOException | RuntimeException e) {
            throw new BrokerTlsException(BrokerTlsException.CA_UNAVAILABLE, "cannot read the CA file " + caFile
                    + " (QUEEN_BROKER_CA_FILE) that the broker's certificate is checked with: " + e.getClass().getSimpleName()
                    + "; nothing was sent to " + baseUrl);
        }
        if (client == null || !Arrays.equals(ca, loadedCa)) {
            HttpClient next;
            try {
                next = builder().sslContext(PemTrust.context(ca)).build();
            } catch (IllegalArgumentException e) {
                throw new BrokerTlsException(BrokerTlsException.CA_UNAVAILABLE, "the CA file " + caFile
                        + " (QUEEN_BROKER_CA_FILE) cannot be used: " + e.getMessage() + "; nothing was sent to " + baseUrl);
            }
            HttpClient previous = client;
            client = next;
            loadedCa = ca;
            if (previous != null) {
                // Calls already on their way finish; the old client then lets its connections go.
                previous.shutdown();
            }
        }
        return client;
    }

    /** What the broker's certificate is checked against, for messages. */
    String trust() {
        if (!"https".equalsIgnoreCase(baseUrl.getScheme())) {
            return "nothing (plain HTTP)";
        }
        return caFile == null ? "the JDK's default trust store (QUEEN_BROKER_CA_FILE is not set)"
                : "the CA certificates in " + caFile + " (QUEEN_BROKER_CA_FILE)";
    }

    private HttpClient.Builder builder() {
        return HttpClient.newBuilder().connectTimeout(connectTimeout).followRedirects(HttpClient.Redirect.NEVER);
    }
}
