package io.queen.broker.engine.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The self warm-up's credential (broker/DESIGN.md, Authentication): 256 random bits drawn at boot,
 * held only in this process and sent only to its own listener, accepted as an admin caller named
 * {@value #SUBJECT} until the warm-up revokes it. It works whatever the broker verifies client
 * tokens with: a broker holding only an RS or EdDSA public key, or a JWKS URL, has no key to sign
 * a token of its own. It is not a JWT (no dots), so no client token can be taken for it.
 */
final class WarmupPass {
    static final String SUBJECT = "queen-warmup";
    static final Identity IDENTITY = new Identity(SUBJECT, EnumSet.allOf(AccessLevel.class));
    private static final SecureRandom RANDOM = new SecureRandom();

    private final AtomicReference<byte[]> current = new AtomicReference<>();

    /** A new pass, replacing any earlier one. */
    String issue() {
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        String pass = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        current.set(pass.getBytes(StandardCharsets.US_ASCII));
        return pass;
    }

    void revoke() {
        current.set(null);
    }

    /** True while {@code token} is the pass issued and not revoked; constant time for its length. */
    boolean matches(String token) {
        byte[] pass = current.get();
        return pass != null && token.length() == pass.length
                && MessageDigest.isEqual(token.getBytes(StandardCharsets.US_ASCII), pass);
    }
}
