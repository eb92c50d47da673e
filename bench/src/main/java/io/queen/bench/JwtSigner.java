package io.queen.bench;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The bearer token of {@code bin/bench --auth}: a compact JWS signed with HS256 by the JDK's
 * {@link Mac} (RFC 7515, 7519), so the bench needs no JWT library of its own. The claims are the
 * ones the broker's AuthSettings reads by default: {@code sub}, the single-value roles claim
 * {@code role} and {@code exp}.
 */
final class JwtSigner {
    private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();

    private JwtSigner() {
    }

    /**
     * A fresh {@code JWT_SECRET}: 32 random bytes as 64 hex characters. The broker takes the
     * variable's UTF-8 bytes as the HMAC key, so the key is 64 bytes, above HS256's minimum of 32.
     */
    static String newSecret() {
        byte[] raw = new byte[32];
        new SecureRandom().nextBytes(raw);
        return HexFormat.of().formatHex(raw);
    }

    /** An HS256 token for {@code subject} holding {@code role}, expiring at {@code expEpochSeconds}. */
    static String hs256(byte[] key, String subject, String role, long iatEpochSeconds, long expEpochSeconds) {
        String header = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
        String claims = "{\"sub\":\"" + subject + "\",\"role\":\"" + role + "\",\"iat\":" + iatEpochSeconds
                + ",\"exp\":" + expEpochSeconds + "}";
        return sign(key, b64(header) + "." + b64(claims));
    }

    /** {@code signingInput} (base64url header "." base64url payload) with its HS256 signature appended. */
    static String sign(byte[] key, String signingInput) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] sig = mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII));
            return signingInput + "." + B64URL.encodeToString(sig);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot compute HmacSHA256", e);
        }
    }

    private static String b64(String json) {
        return B64URL.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
