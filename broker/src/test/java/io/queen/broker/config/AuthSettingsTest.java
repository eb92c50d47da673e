package io.queen.broker.config;

import org.junit.jupiter.api.Test;

import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AuthSettingsTest {
    static final String SECRET = "0123456789abcdef0123456789abcdef";

    @Test
    void offByDefaultAndThenNothingElseIsRead() {
        assertSame(AuthSettings.DISABLED, AuthSettings.from(new Env(Map.of())));
        // Disabled auth is inert: a value only an enabled broker would refuse does not stop the boot.
        assertFalse(AuthSettings.from(new Env(Map.of("JWT_ALGORITHM", "ES256", "JWT_CLOCK_SKEW", "soon"))).enabled());
        assertFalse(BrokerSettings.from(new Env(Map.of())).auth().enabled());
    }

    @Test
    void theReferenceDefaults() {
        AuthSettings s = auth("JWT_SECRET", SECRET);
        assertTrue(s.enabled());
        assertEquals(JwtAlgorithm.HS256, s.algorithm());
        assertEquals(Duration.ofHours(1), s.jwksRefreshInterval());
        assertEquals(Duration.ofSeconds(5), s.jwksTimeout());
        assertEquals(Duration.ofSeconds(30), s.clockSkew());
        assertEquals(List.of("/health", "/metrics/prometheus", "/metrics", "/"), s.skipPaths());
        assertEquals("role", s.rolesClaim());
        assertEquals("roles", s.rolesArrayClaim());
        assertEquals(AuthSettings.RoleNames.DEFAULTS, s.roles());
        assertNull(s.issuer());
        assertNull(s.audience());
    }

    @Test
    void everySettingIsRead() {
        AuthSettings s = auth("JWT_SECRET", SECRET, "JWT_ALGORITHM", "auto", "JWT_JWKS_URL", "https://idp.example/jwks",
                "JWT_JWKS_REFRESH_INTERVAL", "60", "JWT_JWKS_TIMEOUT_MS", "750", "JWT_ISSUER", "iss-1",
                "JWT_AUDIENCE", "queen", "JWT_CLOCK_SKEW", "0", "JWT_SKIP_PATHS", " /health , /assets/ ,,",
                "JWT_ROLES_CLAIM", "scope", "JWT_ROLES_ARRAY_CLAIM", "groups", "JWT_ROLE_ADMIN", "q.admin",
                "JWT_ROLE_READ_WRITE", "q.rw", "JWT_ROLE_READ_ONLY", "q.ro", "JWT_ROLE_WRITE_ONLY", "q.wo");
        assertEquals(JwtAlgorithm.AUTO, s.algorithm());
        assertEquals("https://idp.example/jwks", s.jwksUrl().toString());
        assertEquals(Duration.ofSeconds(60), s.jwksRefreshInterval());
        assertEquals(Duration.ofMillis(750), s.jwksTimeout());
        assertEquals("iss-1", s.issuer());
        assertEquals("queen", s.audience());
        assertEquals(Duration.ZERO, s.clockSkew());
        assertEquals(List.of("/health", "/assets/"), s.skipPaths());
        assertEquals("scope", s.rolesClaim());
        assertEquals("groups", s.rolesArrayClaim());
        assertEquals(new AuthSettings.RoleNames("q.admin", "q.rw", "q.ro", "q.wo"), s.roles());
    }

    @Test
    void skipPathsMatchExactlyOrAsATrailingSlashPrefix() {
        AuthSettings s = auth("JWT_SECRET", SECRET, "JWT_SKIP_PATHS", "/health,/assets/,/");
        assertTrue(s.skips("/health"));
        assertFalse(s.skips("/health/x"), "no slash at the end: exact only");
        assertTrue(s.skips("/assets/app.js"));
        assertTrue(s.skips("/"));
        assertFalse(s.skips("/api/v1/push"), "a lone / skips only the root");
    }

    @Test
    void theAlgorithmSetsAreTheReferences() {
        assertTrue(JwtAlgorithm.RS256.accepts("RS512"), "RS256 is the family-wide RSA setting");
        assertFalse(JwtAlgorithm.RS384.accepts("RS256"));
        assertFalse(JwtAlgorithm.HS256.accepts("HS512"));
        assertFalse(JwtAlgorithm.AUTO.accepts("ES256"));
        assertFalse(JwtAlgorithm.AUTO.accepts("none"));
        for (String alg : List.of("HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "EdDSA")) {
            assertTrue(JwtAlgorithm.AUTO.accepts(alg), alg);
        }
    }

    @Test
    void anUnknownAlgorithmStopsTheBootNamingTheWholeSet() {
        for (String bad : List.of("ES256", "none", "hs256", "eddsa", "PS256")) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> auth("JWT_SECRET", SECRET, "JWT_ALGORITHM", bad), bad);
            assertTrue(e.getMessage().contains("JWT_ALGORITHM=\"" + bad + "\""), e.getMessage());
            assertTrue(e.getMessage().contains("HS256, HS384, HS512, RS256, RS384, RS512, EdDSA, or auto"), e.getMessage());
        }
    }

    @Test
    void incompleteKeyMaterialStopsTheBoot() {
        assertBad("needs JWT_SECRET", "JWT_ALGORITHM", "HS256");
        assertBad("needs JWT_SECRET", "JWT_ALGORITHM", "HS512", "JWT_JWKS_URL", "https://idp/jwks");
        assertBad("needs JWT_PUBLIC_KEY or JWT_JWKS_URL", "JWT_ALGORITHM", "RS256", "JWT_SECRET", SECRET);
        assertBad("needs JWT_PUBLIC_KEY or JWT_JWKS_URL", "JWT_ALGORITHM", "EdDSA");
        assertBad("no key material", "JWT_ALGORITHM", "auto");
        // Complete: each family on its own material.
        auth("JWT_ALGORITHM", "RS384", "JWT_JWKS_URL", "https://idp/jwks");
        auth("JWT_ALGORITHM", "auto", "JWT_JWKS_URL", "https://idp/jwks");
        auth("JWT_ALGORITHM", "EdDSA", "JWT_PUBLIC_KEY", pem(key("Ed25519")));
    }

    @Test
    void contradictorySettingsStopTheBoot() {
        assertBad("JWT_PUBLIC_KEY and JWT_JWKS_URL are both set", "JWT_ALGORITHM", "RS256",
                "JWT_PUBLIC_KEY", pem(key("RSA")), "JWT_JWKS_URL", "https://idp/jwks");
        assertBad("needs an RSA key", "JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", pem(key("Ed25519")));
        assertBad("needs an Ed25519 key", "JWT_ALGORITHM", "EdDSA", "JWT_PUBLIC_KEY", pem(key("RSA")));
        assertBad("JWT_ROLE_ADMIN and JWT_ROLE_READ_ONLY both name the role \"boss\"",
                "JWT_SECRET", SECRET, "JWT_ROLE_ADMIN", "boss", "JWT_ROLE_READ_ONLY", "boss");
        assertBad("JWT_ROLE_READ_WRITE and JWT_ROLE_WRITE_ONLY", "JWT_SECRET", SECRET, "JWT_ROLE_WRITE_ONLY", "read-write");
    }

    @Test
    void aSecretTooShortForItsAlgorithmStopsTheBoot() {
        assertBad("JWT_SECRET is 6 bytes; JWT_ALGORITHM=HS256 needs at least 32", "JWT_SECRET", "secret");
        assertBad("JWT_ALGORITHM=HS384 needs at least 48", "JWT_ALGORITHM", "HS384", "JWT_SECRET", SECRET);
        assertBad("JWT_ALGORITHM=HS512 needs at least 64", "JWT_ALGORITHM", "HS512", "JWT_SECRET", SECRET + "x");
        auth("JWT_ALGORITHM", "HS512", "JWT_SECRET", SECRET + SECRET);
        auth("JWT_ALGORITHM", "auto", "JWT_SECRET", SECRET);
    }

    @Test
    void thePublicKeyIsAnSpkiPemOfRsaOrEd25519() {
        assertEquals("RSA", auth("JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", pem(key("RSA"))).publicKey().getAlgorithm());
        // Line breaks written as \n, as an environment often carries them.
        String flat = pem(key("RSA")).replace("\n", "\\n");
        assertEquals("RSA", auth("JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", flat).publicKey().getAlgorithm());
        assertBad("not a PEM public key", "JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", "hello");
        assertBad("PKCS#1", "JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY",
                "-----BEGIN RSA PUBLIC KEY-----\nMIIB\n-----END RSA PUBLIC KEY-----");
        assertBad("neither an RSA nor an Ed25519", "JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", pem(key("EC")));
    }

    @Test
    void badValuesNameTheVariable() {
        assertBad("JWT_JWKS_URL=\"ftp://idp/jwks\"", "JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", "ftp://idp/jwks");
        assertBad("JWT_JWKS_URL=\"/jwks\"", "JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", "/jwks");
        assertBad("JWT_CLOCK_SKEW=\"-1\"", "JWT_SECRET", SECRET, "JWT_CLOCK_SKEW", "-1");
        assertBad("JWT_JWKS_TIMEOUT_MS=\"0\"", "JWT_SECRET", SECRET, "JWT_JWKS_TIMEOUT_MS", "0");
        assertBad("JWT_JWKS_REFRESH_INTERVAL=\"often\"", "JWT_SECRET", SECRET, "JWT_JWKS_REFRESH_INTERVAL", "often");
        assertBad("JWT_ENABLED=\"maybe\"", "JWT_ENABLED", "maybe");
    }

    @Test
    void theSecretNeverReachesALogLine() {
        String text = auth("JWT_SECRET", SECRET).toString();
        assertFalse(text.contains(SECRET), text);
        assertTrue(text.contains("set (32 bytes)"), text);
    }

    // ---------------------------------------------------------------- helpers

    static AuthSettings auth(String... kv) {
        Map<String, String> env = new HashMap<>();
        env.put("JWT_ENABLED", "true");
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return AuthSettings.from(new Env(env));
    }

    private static void assertBad(String expected, String... kv) {
        ConfigException e = assertThrows(ConfigException.class, () -> auth(kv));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    static PublicKey key(String type) {
        try {
            return KeyPairGenerator.getInstance(type).generateKeyPair().getPublic();
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static String pem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(key.getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
    }
}
