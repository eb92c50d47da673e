package io.queen.broker.http.tls;

import io.helidon.common.tls.Tls;
import io.queen.broker.config.TlsSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;

/**
 * The listener's certificate and key as read from their files at one moment: both files' bytes are
 * read together and checked to belong together before they are served, because a Secret updated
 * by hand (or a half-written copy) can show a new certificate beside the old key for a moment.
 */
public final class ListenerTls {
    private final byte[] digest;
    private final Tls tls;
    private final X509Certificate leaf;

    private ListenerTls(byte[] digest, Tls tls, X509Certificate leaf) {
        this.digest = digest;
        this.tls = tls;
        this.leaf = leaf;
    }

    /** Reads both files; {@link InvalidTlsMaterialException} says which file and why, never its content. */
    public static ListenerTls read(TlsSettings settings) {
        byte[] cert = readFile(settings.certFile().toString(), settings);
        byte[] key = readFile(settings.keyFile().toString(), settings);
        return fromPem(cert, key, settings);
    }

    /** The SHA-256 of both files as read now, to tell a change without parsing anything. */
    static byte[] digestOf(TlsSettings settings) {
        return digest(readFile(settings.certFile().toString(), settings), readFile(settings.keyFile().toString(), settings));
    }

    static ListenerTls fromPem(byte[] cert, byte[] key, TlsSettings settings) {
        List<X509Certificate> chain;
        PrivateKey privateKey;
        try {
            chain = PemFiles.certificates(cert);
            privateKey = PemFiles.privateKey(key);
        } catch (InvalidTlsMaterialException e) {
            throw new InvalidTlsMaterialException(e.getMessage() + " (" + settings.certFile() + ", " + settings.keyFile()
                    + ")", e);
        }
        if (chain.isEmpty()) {
            throw new InvalidTlsMaterialException(settings.certFile() + " (" + TlsSettings.CERT_FILE
                    + ") holds no PEM certificate");
        }
        X509Certificate leaf = chain.getFirst();
        if (!belongTogether(privateKey, leaf.getPublicKey())) {
            throw new InvalidTlsMaterialException("the private key in " + settings.keyFile()
                    + " does not belong to the first certificate in " + settings.certFile());
        }
        Tls tls = Tls.builder().privateKey(privateKey).privateKeyCertChain(chain).build();
        return new ListenerTls(digest(cert, key), tls, leaf);
    }

    public Tls tls() {
        return tls;
    }

    /** The certificate served first in the chain: the one the broker's own warm-up pins. */
    public X509Certificate leaf() {
        return leaf;
    }

    boolean sameFilesAs(byte[] otherDigest) {
        return Arrays.equals(digest, otherDigest);
    }

    /** What the logs say about the certificate: subject and expiry, nothing secret. */
    public String describe() {
        return "certificate " + leaf.getSubjectX500Principal().getName() + " valid until " + leaf.getNotAfter().toInstant();
    }

    // A signature made with the key that the certificate's public key verifies: works for every key
    // type the JDK signs with, where comparing key parameters would need a case per algorithm.
    private static boolean belongTogether(PrivateKey key, PublicKey certified) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
            default -> null;
        };
        if (algorithm == null) {
            throw new InvalidTlsMaterialException("unsupported private key type " + key.getAlgorithm()
                    + " (RSA, EC or EdDSA)");
        }
        try {
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certified);
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static byte[] readFile(String file, TlsSettings settings) {
        try {
            return Files.readAllBytes(Path.of(file));
        } catch (IOException e) {
            String variable = file.equals(settings.certFile().toString()) ? TlsSettings.CERT_FILE : TlsSettings.KEY_FILE;
            throw new InvalidTlsMaterialException("cannot read " + file + " (" + variable + "): "
                    + e.getClass().getSimpleName(), e);
        }
    }

    private static byte[] digest(byte[] cert, byte[] key) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(cert);
            sha.update((byte) 0);
            sha.update(key);
            return sha.digest();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
