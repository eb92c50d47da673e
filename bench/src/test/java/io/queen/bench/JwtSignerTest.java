package io.queen.bench;

import io.queen.broker.config.AuthSettings;
import io.queen.broker.config.JwtAlgorithm;
import io.queen.broker.engine.auth.AccessLevel;
import io.queen.broker.engine.auth.Authenticator;
import io.queen.broker.engine.auth.Identity;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JwtSignerTest {
    /** RFC 7515 appendix A.1: the HS256 example's key, signing input and signature. */
    @Test
    void reproducesTheRfc7515HmacExample() {
        byte[] key = Base64.getUrlDecoder().decode(
                "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow");
        String input = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
                + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
        assertEquals(input + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", JwtSigner.sign(key, input));
    }

    @Test
    void tokenHasTheClaimsTheBrokerReads() {
        String token = JwtSigner.hs256("k".repeat(32).getBytes(StandardCharsets.UTF_8), "bench", "read-write",
                100, 3700);
        String[] parts = token.split("\\.");
        assertEquals(3, parts.length);
        assertEquals("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", decode(parts[0]));
        assertEquals("{\"sub\":\"bench\",\"role\":\"read-write\",\"iat\":100,\"exp\":3700}", decode(parts[1]));
        assertTrue(!parts[2].contains("=") && !parts[2].contains("+") && !parts[2].contains("/"));
    }

    @Test
    void theBrokersOwnVerifierAcceptsTheToken() throws Exception {
        String secret = JwtSigner.newSecret();
        assertEquals(64, secret.length());
        AuthSettings settings = new AuthSettings(true, JwtAlgorithm.HS256, secret.getBytes(StandardCharsets.UTF_8),
                null, null, AuthSettings.DISABLED.jwksRefreshInterval(), AuthSettings.DISABLED.jwksTimeout(), null,
                null, AuthSettings.DISABLED.clockSkew(), AuthSettings.DISABLED.skipPaths(), "role", "roles",
                AuthSettings.RoleNames.DEFAULTS);
        long now = Instant.now().getEpochSecond();
        String token = JwtSigner.hs256(secret.getBytes(StandardCharsets.UTF_8), "bench", "read-write", now,
                now + 3600);
        try (Authenticator auth = Authenticator.start(settings)) {
            Identity who = auth.authenticate(token);
            assertEquals("bench", who.subject());
            assertTrue(who.allows(AccessLevel.READ_WRITE));
            assertTrue(who.allows(AccessLevel.WRITE_ONLY));
            assertTrue(who.allows(AccessLevel.READ_ONLY));
        }
    }

    @Test
    void aTamperedSignatureIsRefusedByTheBroker() {
        String secret = JwtSigner.newSecret();
        AuthSettings settings = new AuthSettings(true, JwtAlgorithm.HS256, secret.getBytes(StandardCharsets.UTF_8),
                null, null, AuthSettings.DISABLED.jwksRefreshInterval(), AuthSettings.DISABLED.jwksTimeout(), null,
                null, AuthSettings.DISABLED.clockSkew(), AuthSettings.DISABLED.skipPaths(), "role", "roles",
                AuthSettings.RoleNames.DEFAULTS);
        long now = Instant.now().getEpochSecond();
        String token = JwtSigner.hs256("x".repeat(64).getBytes(StandardCharsets.UTF_8), "bench", "read-write", now,
                now + 3600);
        try (Authenticator auth = Authenticator.start(settings)) {
            Identity who = null;
            try {
                who = auth.authenticate(token);
            } catch (io.queen.broker.engine.auth.TokenRejected expected) {
                // the signature was made with another key
            }
            assertNull(who);
        }
    }

    private static String decode(String part) {
        return new String(Base64.getUrlDecoder().decode(part), StandardCharsets.UTF_8);
    }
}
