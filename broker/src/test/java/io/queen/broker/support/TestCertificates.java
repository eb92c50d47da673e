package io.queen.broker.support;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;

/** Self-signed certificates for localhost, written as the PEM files cert-manager's Secrets hold. */
public final class TestCertificates {
    private TestCertificates() {
    }

    /** A certificate for {@code localhost} and 127.0.0.1 whose subject CN is {@code name}, with its key. */
    public record Issued(X509Certificate certificate, KeyPair keys) {
        public String certificatePem() {
            try {
                return pem("CERTIFICATE", certificate.getEncoded());
            } catch (java.security.cert.CertificateEncodingException e) {
                throw new IllegalStateException(e);
            }
        }

        /** PKCS#8, as {@code openssl genpkey} and cert-manager write it. */
        public String privateKeyPem() {
            return pem("PRIVATE KEY", keys.getPrivate().getEncoded());
        }

        /** A client context that trusts exactly this certificate. */
        public SSLContext trustingClient() {
            try {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                trust.setCertificateEntry("broker", certificate);
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, tmf.getTrustManagers(), null);
                return context;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public static Issued issue(String name, String keyAlgorithm) {
        return issue(name, keyAlgorithm, new GeneralName(GeneralName.dNSName, "localhost"),
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
    }

    /** A certificate naming only {@code dnsName}, as one issued for a Service: not the loopback. */
    public static Issued issueFor(String name, String keyAlgorithm, String dnsName) {
        return issue(name, keyAlgorithm, new GeneralName(GeneralName.dNSName, dnsName));
    }

    private static Issued issue(String name, String keyAlgorithm, GeneralName... altNames) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance(keyAlgorithm);
            if ("RSA".equals(keyAlgorithm)) {
                generator.initialize(2048);
            }
            KeyPair keys = generator.generateKeyPair();
            Instant now = Instant.now();
            X500Name subject = new X500Name("CN=" + name);
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject,
                    BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofMinutes(5))),
                    Date.from(now.plus(Duration.ofDays(1))), subject, keys.getPublic())
                    .addExtension(Extension.basicConstraints, false, new BasicConstraints(false))
                    .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(altNames));
            String signature = switch (keyAlgorithm) {
                case "RSA" -> "SHA256withRSA";
                case "EC" -> "SHA256withECDSA";
                default -> keyAlgorithm;
            };
            X509Certificate cert = new JcaX509CertificateConverter()
                    .getCertificate(builder.build(new JcaContentSignerBuilder(signature).build(keys.getPrivate())));
            return new Issued(cert, keys);
        } catch (Exception e) {
            throw new IllegalStateException("cannot issue a test certificate", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
