package io.queen.broker.http;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.JwksServer;
import io.queen.broker.support.RawHttp;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each reason a token is refused, over real HTTP, in the reference's words and this broker's error
 * shape; and a JWKS key rotation against a loopback endpoint the test runs, including the endpoint
 * going down.
 */
class JwtRefusalsIT {
    static DatabaseSettings db;
    static JwksServer idp;
    static RSAKey current;
    static Broker auto;
    static Broker rsOnly;
    static final AtomicInteger serial = new AtomicInteger();

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("jwt_refusals");
        idp = new JwksServer();
        current = Jwt.rsaKey("2026-01");
        idp.serve(Jwt.jwks(List.of(current)));
        auto = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "auto",
                "JWT_SECRET", Jwt.SECRET, "JWT_JWKS_URL", idp.url().toString(),
                "JWT_ISSUER", "https://idp.test", "JWT_AUDIENCE", "queen", "JWT_CLOCK_SKEW", "5"));
        rsOnly = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "RS256",
                "JWT_PUBLIC_KEY", pem(current)));
    }

    @AfterAll
    static void stop() {
        rsOnly.close();
        auto.close();
        idp.close();
    }

    @Test
    void eachRefusalHasTheReferencesSentence() throws Exception {
        long now = Instant.now().getEpochSecond();
        Map<String, String[]> cases = new LinkedHashMap<>();
        cases.put("garbage", new String[] {"not-a-jwt", "Bad token header", "bad_token"});
        cases.put("alg none", new String[] {Jwt.none(good().build()), "Bad token header", "bad_token"});
        cases.put("expired", new String[] {Jwt.hs256(good().expirationTime(at(now - 60)).build()),
                "Token has expired", "token_expired"});
        cases.put("not yet valid", new String[] {Jwt.hs256(good().notBeforeTime(at(now + 120)).build()),
                "Token not yet valid", "token_not_yet_valid"});
        cases.put("issued in the future", new String[] {Jwt.hs256(good().issueTime(at(now + 120)).build()),
                "Token issued in the future", "token_issued_in_future"});
        cases.put("wrong issuer", new String[] {Jwt.hs256(good().issuer("https://evil.test").build()),
                "Invalid token issuer", "invalid_token_issuer"});
        cases.put("wrong audience", new String[] {Jwt.hs256(good().audience("someone-else").build()),
                "Invalid token audience", "invalid_token_audience"});
        cases.put("bad signature", new String[] {Jwt.tamper(Jwt.hs256(good().build())),
                "Invalid token signature", "invalid_token_signature"});
        cases.put("another secret", new String[] {Jwt.hs("HS256", "not-the-secret-0123456789abcdefgh", good().build()),
                "Invalid token signature", "invalid_token_signature"});
        cases.put("unknown kid", new String[] {Jwt.rs("RS256", Jwt.rsaKey("never-published"), good().build()),
                "Unknown key ID", "unknown_key_id"});
        cases.put("ES256", new String[] {es256(good().build()), "Unsupported token algorithm", "unsupported_token_algorithm"});
        cases.put("HS keyed with the RSA public key", new String[] {Jwt.hsWithPublicKeyAsSecret(current, good().build()),
                "Invalid token signature", "invalid_token_signature"});

        HttpProbe http = new HttpProbe(auto.port());
        List<String> wrong = new ArrayList<>();
        Reply missing = http.get("/api/v1/resources/queues");
        check(wrong, "missing token", missing, "Authentication required", "auth_required");
        cases.forEach((what, c) -> check(wrong, what, http.call("GET", "/api/v1/resources/queues", null,
                Map.of("Authorization", "Bearer " + c[0])), c[1], c[2]));
        assertEquals(List.of(), wrong);

        // The good tokens pass: HS by the secret, RS by the JWKS key.
        assertEquals(200, get(auto, Jwt.hs256(good().build())).status());
        assertEquals(200, get(auto, Jwt.rs("RS256", current, good().build())).status());
    }

    @Test
    void anHsTokenAgainstAnRsSettingIsNeverVerifiedWithThePublicKey() {
        Reply forged = get(rsOnly, Jwt.hsWithPublicKeyAsSecret(current, good().claim("role", "admin").build()));
        assertEquals(401, forged.status(), forged.body());
        assertEquals("Unsupported token algorithm", forged.json().get("error").asText());
        assertEquals(200, get(rsOnly, Jwt.rs("RS256", current, good().build())).status());
    }

    @Test
    void a401SaysBearerInWwwAuthenticate() {
        RawHttp.Answer a = new RawHttp(auto.port()).send("GET", "/api/v1/status", Map.of(), null);
        assertEquals(401, a.status());
        assertEquals("Bearer", a.headers().get("www-authenticate"));
        assertTrue(a.headers().get("content-type").startsWith("application/json"), a.headers().toString());
    }

    @Test
    void aRotatedKeyIsPickedUpWithoutARestartAndSurvivesTheEndpointGoingDown() {
        RSAKey next = Jwt.rsaKey("2026-02");
        int before = idp.requests();
        idp.serve(Jwt.jwks(List.of(current, next)));
        // The first uses of the new kid fetch the keys again (at most once every five seconds).
        Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
                .until(() -> get(auto, Jwt.rs("RS256", next, good().build())).status() == 200);
        int fetches = idp.requests() - before;
        assertTrue(fetches >= 1 && fetches <= 5, "refetches throttled: " + fetches);

        idp.down();
        // Fresh tokens (not the verified-token cache): the last good keys still verify both kids.
        assertEquals(200, get(auto, Jwt.rs("RS256", next, good().build())).status());
        assertEquals(200, get(auto, Jwt.rs("RS256", current, good().build())).status());
        Reply unknown = get(auto, Jwt.rs("RS256", Jwt.rsaKey("2026-03"), good().build()));
        assertEquals(401, unknown.status());
        assertEquals("Unknown key ID", unknown.json().get("error").asText());
        idp.serve(Jwt.jwks(List.of(current)));
    }

    // ---------------------------------------------------------------- helpers

    /** Valid on the auto broker: issuer, audience, a read-write role, an hour long, unique each time. */
    static JWTClaimsSet.Builder good() {
        return Jwt.claims("tester", "read-write", Instant.now()).issuer("https://idp.test").audience("queen")
                .jwtID("t-" + serial.incrementAndGet());
    }

    static Reply get(Broker b, String token) {
        return new HttpProbe(b.port()).call("GET", "/api/v1/resources/queues", null, Map.of("Authorization", "Bearer " + token));
    }

    static void check(List<String> wrong, String what, Reply r, String error, String code) {
        if (r.status() != 401 || !error.equals(r.json().path("error").asText()) || !code.equals(r.json().path("code").asText())) {
            wrong.add(what + ": " + r.status() + " " + r.body());
        }
    }

    static Date at(long epochSecond) {
        return Date.from(Instant.ofEpochSecond(epochSecond));
    }

    static String es256(JWTClaimsSet claims) throws JOSEException {
        ECKey ec = new ECKeyGenerator(Curve.P_256).keyID("ec").generate();
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID("ec").build(), claims);
        jwt.sign(new ECDSASigner(ec));
        return jwt.serialize();
    }

    static String pem(RSAKey key) {
        try {
            return Jwt.pem(key.toRSAPublicKey().getEncoded());
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }
}
