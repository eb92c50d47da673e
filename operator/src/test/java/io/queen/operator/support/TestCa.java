package io.queen.operator.support;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A certificate authority of the test's own, issuing broker certificates the way cert-manager's CA
 * issuer does: the Secret's {@code tls.crt}, {@code tls.key} and {@code ca.crt}, here as PEM files.
 */
public final class TestCa {
    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    private final X509Certificate certificate;
    private final KeyPair keys;

    private TestCa(X509Certificate certificate, KeyPair keys) {
        this.certificate = certificate;
        this.keys = keys;
    }

    /** A leaf certificate with its key, as a server presents it. */
    public record Leaf(X509Certificate certificate, KeyPair keys, X509Certificate issuer) {
        /** tls.crt: the leaf, then its issuer. */
        public String chainPem() {
            return pem("CERTIFICATE", encoded(certificate)) + pem("CERTIFICATE", encoded(issuer));
        }

        /** tls.key: PKCS#8, as cert-manager writes it. */
        public String keyPem() {
            return pem("PRIVATE KEY", keys.getPrivate().getEncoded());
        }

        /** Writes tls.crt and tls.key into {@code dir}. */
        public void writeTo(Path dir) throws IOException {
            Files.writeString(dir.resolve("tls.crt"), chainPem());
            Files.writeString(dir.resolve("tls.key"), keyPem());
        }

        /** A server-side context presenting this certificate (for a JDK HttpsServer). */
        public SSLContext serverContext() {
            try {
                KeyStore store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                store.setKeyEntry("server", keys.getPrivate(), new char[0], new Certificate[] {certificate, issuer});
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(store, new char[0]);
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(kmf.getKeyManagers(), null, null);
                return context;
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot build a test server context", e);
            }
        }
    }

    public static TestCa create(String name) {
        KeyPair keys = ecKeys();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, BigInteger.valueOf(SERIALS.incrementAndGet()),
                    Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(2))), subject, keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            return new TestCa(sign(builder, keys), keys);
        } catch (IOException e) {
            throw new IllegalStateException("cannot make a test CA", e);
        }
    }

    /** ca.crt. */
    public String pem() {
        return pem("CERTIFICATE", encoded(certificate));
    }

    public void writeTo(Path file) throws IOException {
        Files.writeString(file, pem());
    }

    /** A client context that trusts this CA only. */
    public SSLContext clientContext() {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setCertificateEntry("ca", certificate);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build a test client context", e);
        }
    }

    /** A server certificate for these DNS names and IP addresses (names with a digit-dot form are taken as IPs). */
    public Leaf issue(String... names) {
        KeyPair leafKeys = ecKeys();
        Instant now = Instant.now();
        GeneralName[] alternatives = new GeneralName[names.length];
        for (int i = 0; i < names.length; i++) {
            alternatives[i] = new GeneralName(names[i].matches("[0-9.]+") ? GeneralName.iPAddress : GeneralName.dNSName, names[i]);
        }
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(X500Name.getInstance(certificate.getSubjectX500Principal().getEncoded()),
                    BigInteger.valueOf(SERIALS.incrementAndGet()), Date.from(now.minus(Duration.ofMinutes(5))),
                    Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + names[0]), leafKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(alternatives));
            return new Leaf(sign(builder, keys), leafKeys, certificate);
        } catch (IOException e) {
            throw new IllegalStateException("cannot issue a test certificate", e);
        }
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer) {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
        } catch (Exception e) {
            throw new IllegalStateException("cannot sign a test certificate", e);
        }
    }

    private static KeyPair ecKeys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(256);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] encoded(X509Certificate certificate) {
        try {
            return certificate.getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
