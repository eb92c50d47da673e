package io.queen.broker.engine.auth;

import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import io.queen.broker.config.AuthSettings;
import io.queen.broker.config.Env;
import io.queen.broker.engine.auth.TokenRejected.Reason;
import io.queen.broker.lifecycle.ManualTicker;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.JwksServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Token verification against a clock the test moves: each refusal in the reference's words, the
 * key each algorithm family is checked with, JWKS rotation against a loopback endpoint, and the
 * verified-token cache.
 */
class AuthenticatorTest {
    static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    final ManualTicker clock = new ManualTicker(T0);

    // ---------------------------------------------------------------- HS and the claims

    @Test
    void aValidTokenNamesItsSubjectAndGrantsItsRoles() throws Exception {
        Authenticator a = hs();
        Identity who = a.authenticate(Jwt.hs256(Jwt.claims("svc-orders", "read-write", T0).build()));
        assertEquals("svc-orders", who.subject());
        assertEquals(EnumSet.of(AccessLevel.READ_ONLY, AccessLevel.WRITE_ONLY, AccessLevel.READ_WRITE), who.granted());
        // The array claim counts too, and a role in either is enough.
        Identity both = a.authenticate(Jwt.hs256(Jwt.claims(null, "nothing", T0).claim("roles", List.of("x", "admin")).build()));
        assertNull(both.subject());
        assertTrue(both.allows(AccessLevel.ADMIN));
    }

    @Test
    void levelsAreARoleSetNotALadder() {
        AuthSettings.RoleNames n = AuthSettings.RoleNames.DEFAULTS;
        Identity writer = Identity.of("w", "write-only", List.of(), n);
        Identity reader = Identity.of("r", "read-only", List.of(), n);
        Identity none = Identity.of("n", "guest", List.of(), n);
        assertTrue(writer.allows(AccessLevel.WRITE_ONLY));
        assertFalse(writer.allows(AccessLevel.READ_ONLY), "a producer cannot read");
        assertFalse(writer.allows(AccessLevel.READ_WRITE));
        assertTrue(reader.allows(AccessLevel.READ_ONLY));
        assertFalse(reader.allows(AccessLevel.WRITE_ONLY));
        assertTrue(none.allows(AccessLevel.PUBLIC));
        assertFalse(none.allows(AccessLevel.READ_ONLY));
        Identity rw = Identity.of("rw", null, List.of("read-write"), n);
        assertFalse(rw.allows(AccessLevel.ADMIN));
    }

    @Test
    void eachTimeClaimIsCheckedWithTheSkew() {
        Authenticator a = hs("JWT_CLOCK_SKEW", "30");
        long now = T0.getEpochSecond();
        assertRefused(Reason.EXPIRED, a, Jwt.hs256(exp(now - 31)));
        accepted(a, Jwt.hs256(exp(now - 30)));
        assertRefused(Reason.NOT_YET_VALID, a, Jwt.hs256(base().notBeforeTime(at(now + 31)).build()));
        accepted(a, Jwt.hs256(base().notBeforeTime(at(now + 30)).build()));
        assertRefused(Reason.ISSUED_IN_FUTURE, a, Jwt.hs256(base().issueTime(at(now + 31)).build()));
        accepted(a, Jwt.hs256(base().issueTime(at(now + 30)).build()));
        // exp is optional: such a token does not expire (the reference's rule).
        accepted(a, Jwt.hs256(base().build()));
    }

    @Test
    void issuerAndAudienceAreCheckedOnlyWhenConfigured() {
        JWTClaimsSet right = base().issuer("idp").audience(List.of("other", "queen")).build();
        accepted(hs(), Jwt.hs256(base().issuer("anyone").build()));
        Authenticator strict = hs("JWT_ISSUER", "idp", "JWT_AUDIENCE", "queen");
        accepted(strict, Jwt.hs256(right));
        accepted(strict, Jwt.hs256(base().issuer("idp").audience("queen").build()));
        assertRefused(Reason.INVALID_ISSUER, strict, Jwt.hs256(base().issuer("evil").audience("queen").build()));
        assertRefused(Reason.INVALID_ISSUER, strict, Jwt.hs256(base().audience("queen").build()));
        assertRefused(Reason.INVALID_AUDIENCE, strict, Jwt.hs256(base().issuer("idp").audience("other").build()));
        assertRefused(Reason.INVALID_AUDIENCE, strict, Jwt.hs256(base().issuer("idp").build()));
    }

    @Test
    void aTokenThatIsNotASignedJwtIsABadHeader() {
        Authenticator a = hs();
        for (String junk : List.of("", "abc", "a.b.c", "eyJhbGciOiJIUzI1NiJ9", Jwt.none(base().build()))) {
            assertRefused(Reason.BAD_HEADER, a, junk);
        }
    }

    @Test
    void aBadSignatureOrAnEditedPayloadIsRefused() {
        Authenticator a = hs();
        String token = Jwt.hs256(base().claim("role", "read-only").build());
        assertRefused(Reason.INVALID_SIGNATURE, a, Jwt.tamper(token));
        assertRefused(Reason.INVALID_SIGNATURE, a, Jwt.withPayload(token, Map.of("sub", "x", "role", "admin")));
        assertRefused(Reason.INVALID_SIGNATURE, a, Jwt.hs("HS256", "another-secret-0123456789abcdefgh", base().build()));
    }

    @Test
    void algorithmsOutsideTheSettingAreRefusedBeforeAnyKeyIsTried() {
        Authenticator pinned = hs();
        String longSecret = Jwt.SECRET + Jwt.SECRET;
        assertRefused(Reason.UNSUPPORTED_ALGORITHM, pinned, Jwt.hs("HS512", longSecret, base().build()));
        assertRefused(Reason.UNSUPPORTED_ALGORITHM, pinned, Jwt.rs("RS256", Jwt.rsaKey("k"), base().build()));
        // Under auto a 32-byte secret cannot verify HS512 (RFC 7518 3.2): refused as unsupported.
        Authenticator auto = start("JWT_ALGORITHM", "auto", "JWT_SECRET", Jwt.SECRET);
        assertRefused(Reason.UNSUPPORTED_ALGORITHM, auto, Jwt.hs("HS512", Jwt.SECRET + "x".repeat(32), base().build()));
        Authenticator hs512 = start("JWT_ALGORITHM", "HS512", "JWT_SECRET", longSecret);
        accepted(hs512, Jwt.hs("HS512", longSecret, base().build()));
    }

    // ---------------------------------------------------------------- static keys and confusion

    @Test
    void rsaAndEd25519TokensVerifyAgainstTheStaticPem() throws Exception {
        RSAKey rsa = Jwt.rsaKey("r1");
        Authenticator rs = start("JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", Jwt.pem(rsa.toRSAPublicKey().getEncoded()));
        accepted(rs, Jwt.rs("RS256", rsa, base().build()));
        accepted(rs, Jwt.rs("RS512", rsa, base().build()));
        assertRefused(Reason.INVALID_SIGNATURE, rs, Jwt.rs("RS256", Jwt.rsaKey("r1"), base().build()));

        OctetKeyPair ed = Jwt.edKey("e1");
        Authenticator eddsa = start("JWT_ALGORITHM", "EdDSA", "JWT_PUBLIC_KEY", Jwt.pem(Jwt.edSpki(ed)));
        accepted(eddsa, Jwt.ed(ed, base().build()));
        assertRefused(Reason.INVALID_SIGNATURE, eddsa, Jwt.ed(Jwt.edKey("e1"), base().build()));
    }

    @Test
    void anHsTokenIsNeverCheckedAgainstAnRsaKey() throws Exception {
        RSAKey rsa = Jwt.rsaKey("r1");
        String pem = Jwt.pem(rsa.toRSAPublicKey().getEncoded());
        String forged = Jwt.hsWithPublicKeyAsSecret(rsa, base().claim("role", "admin").build());
        // RS setting: an HS token is not even looked at.
        assertRefused(Reason.UNSUPPORTED_ALGORITHM, start("JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", pem), forged);
        // auto without a secret: the reference's server-side refusal, never the PEM as an HMAC key.
        assertRefused(Reason.NO_HS_SECRET, start("JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", pem), forged);
        // auto with a secret: checked against the secret only, so the forgery fails.
        assertRefused(Reason.INVALID_SIGNATURE,
                start("JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", pem, "JWT_SECRET", Jwt.SECRET), forged);
    }

    @Test
    void underAutoAPemOfTheOtherTypeIsTheServersFault() throws Exception {
        RSAKey rsa = Jwt.rsaKey("r1");
        Authenticator a = start("JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", Jwt.pem(rsa.toRSAPublicKey().getEncoded()));
        TokenRejected e = assertThrows(TokenRejected.class, () -> a.authenticate(Jwt.ed(Jwt.edKey("e"), base().build())));
        assertEquals(Reason.NOT_AN_ED_KEY, e.reason());
        assertTrue(e.reason().serverSide());
    }

    // ---------------------------------------------------------------- JWKS

    @Test
    void jwksKeysAreFoundByKidAndAnUnknownKidIsRefused() {
        RSAKey r1 = Jwt.rsaKey("r1");
        OctetKeyPair e1 = Jwt.edKey("e1");
        try (JwksServer idp = new JwksServer()) {
            idp.serve(Jwt.jwks(List.of(r1, e1, "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"odd\"}")));
            Authenticator a = start("JWT_ALGORITHM", "auto", "JWT_JWKS_URL", idp.url().toString());
            accepted(a, Jwt.rs("RS256", r1, base().build()));
            accepted(a, Jwt.ed(e1, base().build()));
            assertRefused(Reason.UNKNOWN_KEY, a, Jwt.rs("RS256", Jwt.rsaKey("r9"), base().build()));
            // A kid naming a key of the other family does not verify.
            assertRefused(Reason.INVALID_SIGNATURE, a, Jwt.rs("RS256", Jwt.rsaKey("e1"), base().build()));
            a.close();
        }
    }

    @Test
    void aRotatedKeyIsFetchedOnItsFirstUseAtMostOnceEveryFiveSeconds() {
        RSAKey old = Jwt.rsaKey("2026-01");
        RSAKey rotated = Jwt.rsaKey("2026-02");
        try (JwksServer idp = new JwksServer()) {
            idp.serve(Jwt.jwks(List.of(old)));
            Authenticator a = start("JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", idp.url().toString());
            assertEquals(1, idp.requests(), "the boot pre-fetch");
            idp.serve(Jwt.jwks(List.of(old, rotated)));
            String next = Jwt.rs("RS256", rotated, base().build());
            // Within five seconds of the last fetch an unknown kid does not fetch again...
            for (int i = 0; i < 20; i++) {
                assertRefused(Reason.UNKNOWN_KEY, a, Jwt.rs("RS256", rotated, base().claim("n", i).build()));
            }
            assertEquals(1, idp.requests(), "no stampede on an unknown kid");
            // ...after that, its first use fetches once and the new key verifies.
            clock.advance(Duration.ofSeconds(5));
            accepted(a, next);
            assertEquals(2, idp.requests());
            accepted(a, Jwt.rs("RS256", old, base().build()));
            assertEquals(2, idp.requests(), "a known kid never fetches");
            a.close();
        }
    }

    @Test
    void anEndpointThatIsDownKeepsTheLastGoodKeys() {
        RSAKey key = Jwt.rsaKey("k1");
        try (JwksServer idp = new JwksServer()) {
            idp.serve(Jwt.jwks(List.of(key)));
            Authenticator a = start("JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", idp.url().toString());
            idp.down();
            clock.advance(Duration.ofSeconds(10));
            // An unknown kid makes it fetch; the fetch fails; the known key still verifies.
            assertRefused(Reason.UNKNOWN_KEY, a, Jwt.rs("RS256", Jwt.rsaKey("k2"), base().build()));
            assertEquals(2, idp.requests());
            accepted(a, Jwt.rs("RS256", key, base().build()));
            // A document that is not a JWKS changes nothing either.
            idp.serve("{\"not\":\"keys\"}");
            clock.advance(Duration.ofSeconds(10));
            assertRefused(Reason.UNKNOWN_KEY, a, Jwt.rs("RS256", Jwt.rsaKey("k3"), base().build()));
            accepted(a, Jwt.rs("RS256", key, base().claim("again", true).build()));
            a.close();
        }
    }

    @Test
    void theBackgroundRefreshPicksUpARotationAndDropsARemovedKey() throws Exception {
        RSAKey first = Jwt.rsaKey("a");
        RSAKey second = Jwt.rsaKey("b");
        try (JwksServer idp = new JwksServer()) {
            idp.serve(Jwt.jwks(List.of(first)));
            // The refresh loop runs on real time: a one-second interval.
            Authenticator a = start("JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", idp.url().toString(),
                    "JWT_JWKS_REFRESH_INTERVAL", "1");
            String byFirst = Jwt.rs("RS256", first, base().build());
            accepted(a, byFirst);
            assertEquals(1, a.rememberedTokens());
            idp.serve(Jwt.jwks(List.of(second)));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> idp.requests() >= 2
                    && a.rememberedTokens() == 0);
            // The cached success went with the key: the removed key's token is refused now.
            assertRefused(Reason.UNKNOWN_KEY, a, byFirst);
            accepted(a, Jwt.rs("RS256", second, base().build()));
            a.close();
        }
    }

    // ---------------------------------------------------------------- the cache

    @Test
    void aVerifiedTokenIsRememberedUntilItExpires() throws Exception {
        Authenticator a = hs("JWT_CLOCK_SKEW", "0");
        String token = Jwt.hs256(base().expirationTime(at(T0.getEpochSecond() + 60)).claim("role", "read-only").build());
        Identity first = a.authenticate(token);
        assertEquals(1, a.rememberedTokens());
        assertEquals(first, a.authenticate(token));
        clock.advance(Duration.ofSeconds(60));
        a.authenticate(token);
        clock.advance(Duration.ofSeconds(1));
        assertRefused(Reason.EXPIRED, a, token);
        assertEquals(0, a.rememberedTokens(), "the expired entry is gone");
    }

    @Test
    void theCacheIsBounded() {
        VerifiedTokens cache = new VerifiedTokens();
        Identity who = new Identity("x", EnumSet.of(AccessLevel.READ_ONLY));
        for (int i = 0; i < VerifiedTokens.MAX_ENTRIES + 10; i++) {
            cache.put("t" + i, new TokenVerifier.Verified(who, null), T0);
        }
        assertTrue(cache.size() <= VerifiedTokens.MAX_ENTRIES, "size " + cache.size());
        assertNull(cache.get("t0", T0));
        assertEquals(who, cache.get("t" + (VerifiedTokens.MAX_ENTRIES + 9), T0));
        assertNull(cache.get("t" + (VerifiedTokens.MAX_ENTRIES + 9), T0.plus(VerifiedTokens.MAX_HOLD).plusSeconds(1)),
                "a token without exp is held an hour at most");
    }

    // ---------------------------------------------------------------- the warm-up pass

    @Test
    void theWarmupPassIsAnAdminUntilRevokedAndOnlyThatValueIs() throws Exception {
        String publicKey = Jwt.pem(Jwt.rsaKey("k1").toPublicKey().getEncoded());
        Authenticator a = start("JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", publicKey);
        String pass = a.issueWarmupPass();
        Identity who = a.authenticate(pass);
        assertEquals("queen-warmup", who.subject());
        assertTrue(who.allows(AccessLevel.ADMIN));
        char last = pass.charAt(pass.length() - 1);
        String other = pass.substring(0, pass.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertEquals(Reason.BAD_HEADER, assertThrows(TokenRejected.class, () -> a.authenticate(other)).reason(),
                "a value one character off is just a malformed token");
        a.revokeWarmupPass();
        assertThrows(TokenRejected.class, () -> a.authenticate(pass), "revoked: the same value is refused");
        assertTrue(a.issueWarmupPass().length() >= 43, "256 bits, base64url");
    }

    // ---------------------------------------------------------------- helpers

    private Authenticator hs(String... more) {
        String[] kv = new String[more.length + 2];
        kv[0] = "JWT_SECRET";
        kv[1] = Jwt.SECRET;
        System.arraycopy(more, 0, kv, 2, more.length);
        return start(kv);
    }

    private Authenticator start(String... kv) {
        Map<String, String> env = new HashMap<>();
        env.put("JWT_ENABLED", "true");
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return Authenticator.start(AuthSettings.from(new Env(env)), clock);
    }

    private static JWTClaimsSet.Builder base() {
        return new JWTClaimsSet.Builder().subject("tester");
    }

    private static JWTClaimsSet exp(long epochSecond) {
        return base().expirationTime(at(epochSecond)).build();
    }

    private static Date at(long epochSecond) {
        return Date.from(Instant.ofEpochSecond(epochSecond));
    }

    private static void accepted(Authenticator a, String token) {
        try {
            a.authenticate(token);
        } catch (TokenRejected e) {
            throw new AssertionError("refused: " + e.reason(), e);
        }
    }

    private static void assertRefused(Reason expected, Authenticator a, String token) {
        TokenRejected e = assertThrows(TokenRejected.class, () -> a.authenticate(token), "accepted: " + token);
        assertEquals(expected, e.reason(), token);
    }
}
