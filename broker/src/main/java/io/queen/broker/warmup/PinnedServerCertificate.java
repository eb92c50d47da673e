package io.queen.broker.warmup;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;

/**
 * Trusts a server only when its certificate is exactly the one given: the warm-up talks to its
 * own listener, whose certificate it read from the mounted files, so neither a CA nor the host
 * name is what proves the peer. The certificate names the Service, not the loopback address the
 * warm-up dials; an extended trust manager does its own identity check, which here is the pin.
 */
final class PinnedServerCertificate extends X509ExtendedTrustManager {
    private final X509Certificate pinned;

    PinnedServerCertificate(X509Certificate pinned) {
        this.pinned = pinned;
    }

    private void check(X509Certificate[] chain) throws CertificateException {
        if (chain == null || chain.length == 0 || !chain[0].equals(pinned)) {
            throw new CertificateException("the listener served a certificate other than "
                    + pinned.getSubjectX500Principal().getName() + " (replaced since boot?)");
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        check(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("a client-side trust manager only");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        throw new CertificateException("a client-side trust manager only");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        throw new CertificateException("a client-side trust manager only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
