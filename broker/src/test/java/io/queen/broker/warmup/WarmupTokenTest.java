package io.queen.broker.warmup;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.broker.config.AuthSettings;
import io.queen.broker.config.Env;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The warm-up's own token: signed as the broker verifies, with the broker's claim and role names. */
class WarmupTokenTest {
    private static final String SECRET_64 = "0123456789abcdef".repeat(4);

    private static AuthSettings auth(String... kv) {
        Map<String, String> env = new HashMap<>();
        env.put("JWT_ENABLED", "true");
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return AuthSettings.from(new Env(env));
    }

    @Test
    void signsInThePinnedHsAlgorithmWithTheConfiguredClaims() throws Exception {
        AuthSettings auth = auth("JWT_ALGORITHM", "HS512", "JWT_SECRET", SECRET_64, "JWT_ISSUER", "https://idp",
                "JWT_AUDIENCE", "queen", "JWT_ROLES_CLAIM", "grp", "JWT_ROLE_ADMIN", "queen-admins");
        assertNull(WarmupToken.unsignable(auth));
        SignedJWT jwt = SignedJWT.parse(WarmupToken.sign(auth, Duration.ofSeconds(90)));
        assertEquals(JWSAlgorithm.HS512, jwt.getHeader().getAlgorithm());
        assertTrue(jwt.verify(new MACVerifier(SECRET_64.getBytes(StandardCharsets.UTF_8))));
        JWTClaimsSet claims = jwt.getJWTClaimsSet();
        assertEquals("queen-admins", claims.getStringClaim("grp"));
        assertEquals("https://idp", claims.getIssuer());
        assertEquals(List.of("queen"), claims.getAudience());
        assertEquals(WarmupToken.SUBJECT, claims.getSubject());
        assertEquals(90_000, claims.getExpirationTime().getTime() - claims.getIssueTime().getTime());
    }

    @Test
    void autoSignsHs256AndLeavesUnsetClaimsOut() throws Exception {
        SignedJWT jwt = SignedJWT.parse(WarmupToken.sign(auth("JWT_ALGORITHM", "auto", "JWT_SECRET", SECRET_64),
                Duration.ofSeconds(60)));
        assertEquals(JWSAlgorithm.HS256, jwt.getHeader().getAlgorithm());
        assertEquals("admin", jwt.getJWTClaimsSet().getStringClaim("role"));
        assertNull(jwt.getJWTClaimsSet().getIssuer());
        assertTrue(jwt.getJWTClaimsSet().getAudience().isEmpty());
    }

    @Test
    void aBrokerWithoutAnHmacKeyCannotSign() {
        AuthSettings jwksOnly = auth("JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", "https://idp/jwks");
        assertNotNull(WarmupToken.unsignable(jwksOnly));
        assertThrows(IllegalStateException.class, () -> WarmupToken.sign(jwksOnly, Duration.ofSeconds(60)));
        // A secret beside an RS-only setting is not used for verification, so it cannot sign either.
        assertNotNull(WarmupToken.unsignable(auth("JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", "https://idp/jwks",
                "JWT_SECRET", SECRET_64)));
    }
}
