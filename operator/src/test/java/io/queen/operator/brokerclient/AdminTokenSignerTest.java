package io.queen.operator.brokerclient;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.operator.support.MutableClock;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The operator's own admin tokens: what they claim, that the broker's key verifies them, when they are renewed. */
class AdminTokenSignerTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final Instant START = Instant.parse("2025-01-01T00:00:00Z");

    private final MutableClock clock = new MutableClock(START);

    @Test
    void aTokenIsAnAdminJwtSignedWithTheSecretForItsLifetime() throws Exception {
        var signer = new AdminTokenSigner(signing("HS384", "queen-idp", "queen-broker"), clock);

        SignedJWT jwt = SignedJWT.parse(signer.bearerToken().orElseThrow());

        assertEquals(JWSAlgorithm.HS384, jwt.getHeader().getAlgorithm());
        assertTrue(jwt.verify(new MACVerifier(SECRET)), "the broker's secret verifies the signature");
        assertFalse(jwt.verify(new MACVerifier("x".repeat(48).getBytes(StandardCharsets.UTF_8))));
        JWTClaimsSet claims = jwt.getJWTClaimsSet();
        assertEquals("admin", claims.getStringClaim("role"));
        assertEquals("queen-operator", claims.getSubject());
        assertEquals("queen-idp", claims.getIssuer());
        assertEquals(List.of("queen-broker"), claims.getAudience());
        assertEquals(START, claims.getIssueTime().toInstant());
        assertEquals(START.plus(Duration.ofMinutes(9)), claims.getExpirationTime().toInstant());
    }

    @Test
    void noIssuerOrAudienceIsClaimedUnlessSet() throws Exception {
        JWTClaimsSet claims = SignedJWT.parse(new AdminTokenSigner(signing("HS256", null, null), clock)
                .bearerToken().orElseThrow()).getJWTClaimsSet();

        assertNull(claims.getIssuer());
        assertTrue(claims.getAudience().isEmpty());
    }

    @Test
    void theTokenIsReusedUntilAThirdOfItsLifetimeIsLeftThenReplaced() throws Exception {
        var signer = new AdminTokenSigner(signing("HS256", null, null), clock);
        String first = signer.bearerToken().orElseThrow();

        clock.advance(Duration.ofMinutes(5).plusSeconds(59));
        assertEquals(first, signer.bearerToken().orElseThrow(), "6 of 9 minutes not yet gone");

        clock.advance(Duration.ofSeconds(1));
        String second = signer.bearerToken().orElseThrow();
        assertNotEquals(first, second);
        assertEquals(clock.instant().plus(Duration.ofMinutes(9)),
                SignedJWT.parse(second).getJWTClaimsSet().getExpirationTime().toInstant());
    }

    @Test
    void aRefusedTokenIsReplacedAtTheNextCall() {
        var signer = new AdminTokenSigner(signing("HS256", null, null), clock);
        String first = signer.bearerToken().orElseThrow();

        signer.refused();

        assertNotEquals(first, signer.bearerToken().orElseThrow());
    }

    @Test
    void itsDescriptionNamesTheSourceButNotTheSecret() {
        String description = new AdminTokenSigner(signing("HS256", null, null), clock).describe();

        assertTrue(description.contains("QUEEN_OPERATOR_JWT_SECRET"), description);
        assertFalse(description.contains(new String(SECRET, StandardCharsets.UTF_8)), description);
    }

    private static CredentialSettings.Signing signing(String algorithm, String issuer, String audience) {
        return new CredentialSettings.Signing(algorithm, SECRET, issuer, audience, "role", "admin", Duration.ofMinutes(9));
    }
}
