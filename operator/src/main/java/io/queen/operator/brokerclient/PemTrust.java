package io.queen.operator.brokerclient;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;

/** An SSL context that trusts exactly the CA certificates of a PEM bundle (a cert-manager {@code ca.crt}). */
final class PemTrust {
    private PemTrust() {
    }

    /**
     * @throws IllegalArgumentException when the bytes hold no X.509 certificate, naming what is
     *                                  wrong and never echoing the content
     */
    static SSLContext context(byte[] pem) {
        Collection<? extends Certificate> certificates;
        try {
            certificates = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("it is not a PEM certificate bundle (" + e.getClass().getSimpleName() + ")");
        }
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException("it holds no certificate");
        }
        try {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int i = 0;
            for (Certificate certificate : certificates) {
                trusted.setCertificateEntry("ca-" + i++, certificate);
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | java.io.IOException e) {
            // An in-memory key store of parsed certificates cannot fail but for a broken JDK.
            throw new IllegalStateException("cannot build a trust store: " + e.getMessage(), e);
        }
    }
}
