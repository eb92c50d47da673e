package io.queen.broker.http.tls;

import io.queen.broker.config.TlsSettings;
import io.queen.broker.support.TestCertificates;
import io.queen.broker.support.TestCertificates.Issued;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.ASN1EncodableVector;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.ASN1TaggedObject;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.DERTaggedObject;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.Test;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The key forms a mounted Secret may hold, and the pairs that must be refused. */
class ListenerTlsTest {
    private static final TlsSettings FILES = new TlsSettings(Path.of("/tls/tls.crt"), Path.of("/tls/tls.key"),
            Duration.ofSeconds(30));

    @Test
    void readsPkcs8KeysOfEachType() {
        for (String type : new String[] {"RSA", "EC", "Ed25519"}) {
            Issued issued = TestCertificates.issue("queen-" + type, type);
            ListenerTls tls = ListenerTls.fromPem(bytes(issued.certificatePem()), bytes(issued.privateKeyPem()), FILES);
            assertTrue(tls.describe().contains("CN=queen-" + type), tls.describe());
        }
    }

    @Test
    void readsTraditionalRsaAndSec1EcKeysAsCertManagerWritesThem() throws Exception {
        for (String type : new String[] {"RSA", "EC"}) {
            Issued issued = TestCertificates.issue("queen-" + type, type);
            String traditional = traditionalPem(issued);
            assertTrue(traditional.contains("BEGIN " + type + " PRIVATE KEY"), traditional.lines().findFirst().orElse(""));
            // openssl ecparam -genkey writes the curve's parameters in a block of their own before the key.
            String withParameters = ("EC".equals(type) ? "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n"
                    + "-----END EC PARAMETERS-----\n" : "") + traditional;
            ListenerTls tls = ListenerTls.fromPem(bytes(issued.certificatePem()), bytes(withParameters), FILES);
            assertTrue(tls.describe().contains("CN=queen-" + type), tls.describe());
        }
    }

    @Test
    void aKeyOfAnotherCertificateIsRefusedNamingBothFiles() {
        Issued one = TestCertificates.issue("one", "EC");
        Issued other = TestCertificates.issue("other", "EC");
        InvalidTlsMaterialException e = assertThrows(InvalidTlsMaterialException.class,
                () -> ListenerTls.fromPem(bytes(one.certificatePem()), bytes(other.privateKeyPem()), FILES));
        assertEquals("the private key in /tls/tls.key does not belong to the first certificate in /tls/tls.crt",
                e.getMessage());
    }

    @Test
    void aBrokenSec1KeyIsAClearRefusal() {
        Issued issued = TestCertificates.issue("queen", "EC");
        String truncated = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----\n";
        assertThrows(InvalidTlsMaterialException.class,
                () -> ListenerTls.fromPem(bytes(issued.certificatePem()), bytes(truncated), FILES));
    }

    /** PKCS#1 for RSA (as Bouncy Castle writes it); SEC1 with the named curve for EC, as Go's x509 and openssl write it. */
    private static String traditionalPem(Issued issued) throws Exception {
        if ("EC".equals(issued.keys().getPrivate().getAlgorithm())) {
            PrivateKeyInfo info = PrivateKeyInfo.getInstance(issued.keys().getPrivate().getEncoded());
            ASN1ObjectIdentifier curve = (ASN1ObjectIdentifier) info.getPrivateKeyAlgorithm().getParameters();
            // The JDK's PKCS#8 leaves the curve out of the inner SEC1 (the wrapper names it): put it back as [0].
            ASN1Sequence inner = ASN1Sequence.getInstance(info.parsePrivateKey());
            ASN1EncodableVector fields = new ASN1EncodableVector();
            fields.add(inner.getObjectAt(0));
            fields.add(inner.getObjectAt(1));
            fields.add(new DERTaggedObject(true, 0, curve));
            for (int i = 2; i < inner.size(); i++) {
                if (inner.getObjectAt(i) instanceof ASN1TaggedObject t && t.getTagNo() == 1) {
                    fields.add(t);
                }
            }
            byte[] sec1 = new DERSequence(fields).getEncoded();
            return "-----BEGIN EC PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(sec1) + "\n-----END EC PRIVATE KEY-----\n";
        }
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(issued.keys());
        }
        return out.toString();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
