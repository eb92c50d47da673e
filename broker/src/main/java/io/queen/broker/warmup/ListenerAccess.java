package io.queen.broker.warmup;

import javax.net.ssl.SSLContext;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;

/**
 * How the warm-up reaches the broker's own listener as a client would: its address, and on an
 * HTTPS listener or with JWT authentication on, the trust and the credential a client needs.
 *
 * @param base          {@code http://} or {@code https://} with the loopback (or bound) address and port
 * @param sslContext    for HTTPS, a context trusting exactly the listener's own certificate; null for HTTP
 * @param authorization the {@code Authorization} header's value, null without authentication
 */
public record ListenerAccess(URI base, SSLContext sslContext, String authorization) {

    /** Plain HTTP to {@code bindAddress:port}; a wildcard bind address is reached on the loopback. */
    public static ListenerAccess to(String bindAddress, int port) {
        return new ListenerAccess(URI.create("http://" + hostFor(bindAddress) + ":" + port), null, null);
    }

    /** The same listener over HTTPS, trusting only {@code servedCertificate} (the listener's leaf at boot). */
    public ListenerAccess overTls(X509Certificate servedCertificate) throws GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new PinnedServerCertificate[] {new PinnedServerCertificate(servedCertificate)}, null);
        return new ListenerAccess(URI.create("https" + base.toString().substring("http".length())), context, authorization);
    }

    /** The same, sending {@code token} as a bearer token. */
    public ListenerAccess withBearer(String token) {
        return new ListenerAccess(base, sslContext, "Bearer " + token);
    }

    static String hostFor(String bindAddress) {
        String host = bindAddress.equals("0.0.0.0") || bindAddress.equals("::") || bindAddress.equals("[::]")
                ? "127.0.0.1" : bindAddress;
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }
}
