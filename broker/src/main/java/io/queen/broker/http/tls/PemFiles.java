package io.queen.broker.http.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The certificate chain and the private key out of the PEM files a Secret holds, read with the JDK
 * alone: a chain of {@code CERTIFICATE} blocks, and a key as PKCS#8 ({@code PRIVATE KEY}: RSA, EC,
 * Ed25519), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}, what cert-manager
 * writes for ECDSA with its default encoding and {@code openssl ecparam -genkey} prints). PKCS#1 and
 * SEC1 are the inner structure of a PKCS#8 key, so they are read by adding the PKCS#8 wrapper (an
 * algorithm identifier, for SEC1 naming the key's curve): no key material is decoded here.
 */
final class PemFiles {
    private static final Pattern KEY_BLOCK = Pattern.compile(
            "-----BEGIN (PRIVATE|RSA PRIVATE|EC PRIVATE) KEY-----([A-Za-z0-9+/=\\s]+)-----END \\1 KEY-----");
    /** DER of OBJECT IDENTIFIER 1.2.840.10045.2.1 (id-ecPublicKey). */
    private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
    /** DER of SEQUENCE { OBJECT IDENTIFIER 1.2.840.113549.1.1.1 (rsaEncryption), NULL }. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
            (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
    private static final byte[] VERSION_0 = {0x02, 0x01, 0x00};

    private PemFiles() {
    }

    /** Every certificate of the chain, leaf first as the file lists them; empty when there is none. */
    static List<X509Certificate> certificates(byte[] pem) {
        try {
            List<X509Certificate> chain = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem))) {
                chain.add((X509Certificate) c);
            }
            return chain;
        } catch (CertificateException e) {
            throw new InvalidTlsMaterialException("the certificate file holds no readable PEM certificate chain");
        }
    }

    /** The first private key block, as the JDK key of its algorithm. */
    static PrivateKey privateKey(byte[] pem) {
        Matcher m = KEY_BLOCK.matcher(new String(pem, StandardCharsets.US_ASCII));
        if (!m.find()) {
            throw new InvalidTlsMaterialException("the key file holds no PEM private key (PKCS#8, PKCS#1 RSA or SEC1 EC)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2).trim());
        } catch (IllegalArgumentException e) {
            throw new InvalidTlsMaterialException("the private key is not valid base64");
        }
        return switch (m.group(1)) {
            case "RSA PRIVATE" -> generate("RSA", pkcs8(RSA_ALGORITHM, der));
            case "EC PRIVATE" -> generate("EC", pkcs8(der(0x30, concat(EC_PUBLIC_KEY_OID, namedCurve(der))), der));
            default -> pkcs8Key(der);
        };
    }

    private static PrivateKey pkcs8Key(byte[] der) {
        for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // not this algorithm: the PKCS#8 names it, but the JDK wants the factory chosen first
            }
        }
        throw new InvalidTlsMaterialException("the private key is not an RSA, EC or EdDSA PKCS#8 key");
    }

    private static PrivateKey generate(String algorithm, byte[] pkcs8) {
        try {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
        } catch (GeneralSecurityException e) {
            throw new InvalidTlsMaterialException("the " + algorithm + " private key cannot be read");
        }
    }

    private static byte[] pkcs8(byte[] algorithmIdentifier, byte[] innerKey) {
        return der(0x30, concat(VERSION_0, algorithmIdentifier, der(0x04, innerKey)));
    }

    /** The curve's OBJECT IDENTIFIER (tag, length and value) from the SEC1 structure's [0] field. */
    private static byte[] namedCurve(byte[] sec1) {
        Der outer = new Der(sec1, 0);
        if (outer.tag != 0x30) {
            throw new InvalidTlsMaterialException("the EC private key is not a SEC1 structure");
        }
        int at = outer.valueStart;
        while (at < outer.end) {
            Der field = new Der(sec1, at);
            if (field.tag == 0xa0) {
                Der oid = new Der(sec1, field.valueStart);
                if (oid.tag != 0x06) {
                    break;
                }
                return Arrays.copyOfRange(sec1, field.valueStart, oid.end);
            }
            at = field.end;
        }
        throw new InvalidTlsMaterialException("the EC private key names no curve (SEC1 without parameters)");
    }

    private static byte[] der(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else if (n < 0x100) {
            out.write(0x81);
            out.write(n);
        } else {
            out.write(0x82);
            out.write(n >> 8);
            out.write(n & 0xff);
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** One DER element's header at {@code at}: its tag, where its value starts and where it ends. */
    private static final class Der {
        final int tag;
        final int valueStart;
        final int end;

        Der(byte[] b, int at) {
            if (at + 2 > b.length) {
                throw new InvalidTlsMaterialException("the EC private key is truncated");
            }
            tag = b[at] & 0xff;
            int len = b[at + 1] & 0xff;
            int start = at + 2;
            if (len >= 0x80) {
                int bytes = len & 0x7f;
                if (bytes == 0 || bytes > 3 || start + bytes > b.length) {
                    throw new InvalidTlsMaterialException("the EC private key has a malformed length");
                }
                len = 0;
                for (int i = 0; i < bytes; i++) {
                    len = (len << 8) | (b[start + i] & 0xff);
                }
                start += bytes;
            }
            if (start + len > b.length) {
                throw new InvalidTlsMaterialException("the EC private key is truncated");
            }
            valueStart = start;
            end = start + len;
        }
    }
}
