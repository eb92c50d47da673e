package io.queen.broker.engine.segment;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.logging.Logger;

/**
 * Payload encryption at rest (broker/DESIGN.md, Storage model): AES-256-GCM, stored as
 * {@code {"encrypted":"<b64>","iv":"<b64 16 bytes>","authTag":"<b64 16 bytes>"}}.
 * The IV is 16 random bytes of which only the first 12 are the GCM nonce, as in the C++/OpenSSL implementation.
 * Thread-safe: a fresh {@link Cipher} per call (virtual threads would defeat a ThreadLocal cache anyway).
 */
public final class PayloadCipher {
    private static final Logger LOG = Logger.getLogger(PayloadCipher.class.getName());

    private static final String TRANSFORMATION = "AES/GCM/NoPadding";
    private static final int KEY_HEX_CHARS = 64;
    private static final int IV_LENGTH = 16;
    private static final int NONCE_LENGTH = 12;
    private static final int TAG_LENGTH = 16;

    // Payloads may be large; lift Jackson's default string-length cap for the ciphertext field.
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final PayloadCipher DISABLED = new PayloadCipher(null);

    private final SecretKeySpec key;

    private PayloadCipher(SecretKeySpec key) {
        this.key = key;
    }

    /**
     * A cipher for {@code QUEEN_ENCRYPTION_KEY}. Absent or blank disables encryption silently; any other value that
     * is not 64 hex characters disables it with one warning, never an exception, so the broker still boots.
     */
    public static PayloadCipher fromHexKey(String hexOrNull) {
        if (hexOrNull == null || hexOrNull.isBlank()) {
            return DISABLED;
        }
        String hex = hexOrNull.strip();
        if (hex.length() != KEY_HEX_CHARS || !isHex(hex)) {
            LOG.warning("QUEEN_ENCRYPTION_KEY is not " + KEY_HEX_CHARS
                    + " hexadecimal characters; encryption at rest is disabled");
            return DISABLED;
        }
        return new PayloadCipher(new SecretKeySpec(HexFormat.of().parseHex(hex), "AES"));
    }

    public static PayloadCipher disabled() {
        return DISABLED;
    }

    public boolean isEnabled() {
        return key != null;
    }

    /**
     * The envelope JSON for {@code plaintextJson}, or the input itself when encryption is disabled.
     *
     * @throws IllegalStateException if the JCE fails; callers store the plaintext instead (as the reference
     *                               broker does: encryption never fails a push)
     */
    public byte[] encrypt(byte[] plaintextJson) {
        if (key == null) {
            return plaintextJson;
        }
        byte[] iv = new byte[IV_LENGTH];
        RANDOM.nextBytes(iv);
        byte[] sealed;
        try {
            Cipher cipher = Cipher.getInstance(TRANSFORMATION);
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_LENGTH * 8, iv, 0, NONCE_LENGTH));
            sealed = cipher.doFinal(plaintextJson);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("payload encryption failed", e);
        }
        // JCE appends the tag to the ciphertext; the envelope keeps them apart.
        int ctLen = sealed.length - TAG_LENGTH;
        Base64.Encoder b64 = Base64.getEncoder();
        String json = "{\"encrypted\":\"" + b64.encodeToString(Arrays.copyOf(sealed, ctLen))
                + "\",\"iv\":\"" + b64.encodeToString(iv)
                + "\",\"authTag\":\"" + b64.encodeToString(Arrays.copyOfRange(sealed, ctLen, sealed.length))
                + "\"}";
        return json.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The plaintext if {@code payload} has the envelope shape and decrypts with this key; otherwise {@code payload}
     * unchanged (no key, ordinary JSON, wrong key, tampered data).
     */
    public byte[] decryptIfEnvelope(byte[] payload) {
        if (key == null) {
            return payload;
        }
        Envelope env = Envelope.parse(payload);
        if (env == null) {
            return payload;
        }
        try {
            // MIME decoder: tolerant of line breaks some base64 writers insert.
            Base64.Decoder b64 = Base64.getMimeDecoder();
            byte[] ct = b64.decode(env.encrypted());
            byte[] iv = b64.decode(env.iv());
            byte[] tag = b64.decode(env.authTag());
            if (iv.length < NONCE_LENGTH || tag.length != TAG_LENGTH) {
                return payload;
            }
            byte[] sealed = Arrays.copyOf(ct, ct.length + TAG_LENGTH);
            System.arraycopy(tag, 0, sealed, ct.length, TAG_LENGTH);
            Cipher cipher = Cipher.getInstance(TRANSFORMATION);
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_LENGTH * 8, iv, 0, NONCE_LENGTH));
            return cipher.doFinal(sealed);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return payload;
        }
    }

    /**
     * A stored frame's payload as delivered: the plaintext when it is an envelope this key opens,
     * else as stored. ({@link #decryptIfEnvelope} already tells envelopes apart, so checking the
     * frame's flag or the shape first would only parse the envelope twice.)
     */
    public byte[] payloadOf(Frame f) {
        return decryptIfEnvelope(f.payload());
    }

    /** True if {@code payload} is a JSON object with exactly the string fields encrypted, iv and authTag. */
    public static boolean looksLikeEnvelope(byte[] payload) {
        return Envelope.parse(payload) != null;
    }

    private static boolean isHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    private record Envelope(String encrypted, String iv, String authTag) {

        /** Streaming check so an ordinary JSON payload is rejected at its first token or field name. */
        static Envelope parse(byte[] payload) {
            if (payload == null || payload.length == 0) {
                return null;
            }
            try (JsonParser p = JSON.createParser(payload)) {
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    return null;
                }
                String encrypted = null;
                String iv = null;
                String authTag = null;
                JsonToken t;
                while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    if (p.nextToken() != JsonToken.VALUE_STRING) {
                        return null;
                    }
                    switch (name) {
                        case "encrypted" -> {
                            if (encrypted != null) {
                                return null;
                            }
                            encrypted = p.getText();
                        }
                        case "iv" -> {
                            if (iv != null) {
                                return null;
                            }
                            iv = p.getText();
                        }
                        case "authTag" -> {
                            if (authTag != null) {
                                return null;
                            }
                            authTag = p.getText();
                        }
                        default -> {
                            return null;
                        }
                    }
                }
                if (t != JsonToken.END_OBJECT || encrypted == null || iv == null || authTag == null
                        || p.nextToken() != null) {
                    return null;
                }
                return new Envelope(encrypted, iv, authTag);
            } catch (IOException e) {
                return null;
            }
        }
    }
}
