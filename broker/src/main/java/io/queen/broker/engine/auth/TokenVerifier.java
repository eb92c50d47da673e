package io.queen.broker.engine.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.broker.config.AuthSettings;
import io.queen.broker.engine.auth.TokenRejected.Reason;

import java.security.PublicKey;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.text.ParseException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;

/**
 * Checks one bearer token, in the reference broker's order and words: the header must parse as a
 * JWS (an unsecured {@code alg: none} token does not), its {@code alg} must be in the
 * {@code JWT_ALGORITHM} set, the key is chosen from that {@code alg} (HS: the secret; RS and
 * EdDSA: the static PEM, else the JWKS key the {@code kid} names), Nimbus verifies the signature,
 * and then {@code exp}, {@code nbf}, {@code iat} with the clock skew, {@code iss} and {@code aud}
 * when configured.
 *
 * <p>Choosing the key from the algorithm's family is what defeats algorithm confusion: an HS token
 * is only ever checked against {@code JWT_SECRET}, never against the RSA public key's bytes, and
 * an RS setting does not take an HS token at all.
 *
 * <p>Where the reference leaves a case open, the reference source settled it: {@code exp} is
 * optional (a token without it does not expire), the three time checks compare whole seconds
 * ({@code now > exp + skew}, {@code now + skew < nbf}, {@code iat > now + skew}), and an HS token
 * with no secret configured, or a PEM of the other key type under {@code auto}, is the server's
 * 500, not the caller's 401. One case is ours: a time claim that is not a number (the reference
 * ignores it) fails the claims parse and is refused with the signature's message, as the
 * reference refuses a payload that is not a JSON object.
 */
final class TokenVerifier {
    private final AuthSettings settings;
    private final InstantSource clock;
    private final JwksKeys jwks;
    private final MACVerifier hmac;
    private final JWSVerifier staticKey;
    private final boolean staticKeyIsRsa;

    TokenVerifier(AuthSettings settings, InstantSource clock, JwksKeys jwks) {
        this.settings = settings;
        this.clock = clock;
        this.jwks = jwks;
        try {
            this.hmac = settings.secret() == null ? null : new MACVerifier(settings.secret());
            PublicKey key = settings.publicKey();
            this.staticKeyIsRsa = key instanceof RSAPublicKey;
            this.staticKey = key == null ? null : key instanceof RSAPublicKey rsa ? new RSASSAVerifier(rsa)
                    : new Ed25519Verifier(ed25519(key));
        } catch (JOSEException e) {
            // AuthSettings checked the secret's length and the key's type; this is a bug.
            throw new IllegalStateException("unusable JWT key material: " + e.getMessage(), e);
        }
    }

    /** The caller a valid token names, or why the token is refused. */
    Verified verify(String token) throws TokenRejected {
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(token);
        } catch (ParseException e) {
            throw new TokenRejected(Reason.BAD_HEADER);
        }
        JWSHeader header = jwt.getHeader();
        String alg = header.getAlgorithm().getName();
        if (!settings.algorithm().accepts(alg)) {
            throw new TokenRejected(Reason.UNSUPPORTED_ALGORITHM);
        }
        if (!verifierFor(alg, header.getKeyID()).verifySignature(jwt)) {
            throw new TokenRejected(Reason.INVALID_SIGNATURE);
        }
        JWTClaimsSet claims;
        try {
            claims = jwt.getJWTClaimsSet();
        } catch (ParseException e) {
            throw new TokenRejected(Reason.INVALID_SIGNATURE);
        }
        long now = clock.instant().getEpochSecond();
        long skew = settings.clockSkew().toSeconds();
        Long exp = seconds(claims.getExpirationTime());
        if (exp != null && now > exp + skew) {
            throw new TokenRejected(Reason.EXPIRED);
        }
        Long nbf = seconds(claims.getNotBeforeTime());
        if (nbf != null && now + skew < nbf) {
            throw new TokenRejected(Reason.NOT_YET_VALID);
        }
        Long iat = seconds(claims.getIssueTime());
        if (iat != null && iat > now + skew) {
            throw new TokenRejected(Reason.ISSUED_IN_FUTURE);
        }
        if (settings.issuer() != null && !settings.issuer().equals(claims.getIssuer())) {
            throw new TokenRejected(Reason.INVALID_ISSUER);
        }
        if (settings.audience() != null && !claims.getAudience().contains(settings.audience())) {
            throw new TokenRejected(Reason.INVALID_AUDIENCE);
        }
        Identity who = Identity.of(claims.getSubject(), role(claims.getClaim(settings.rolesClaim())),
                roles(claims.getClaim(settings.rolesArrayClaim())), settings.roles());
        return new Verified(who, exp == null ? null : Instant.ofEpochSecond(exp + skew));
    }

    /** A verified caller and the last instant its token is still valid at (null: no {@code exp}). */
    record Verified(Identity identity, Instant validUntil) {
    }

    /** One check of the token's signature with the key its algorithm's family selects. */
    private interface Check {
        boolean verifySignature(SignedJWT jwt) throws TokenRejected;
    }

    private Check verifierFor(String alg, String kid) throws TokenRejected {
        JWSAlgorithm a = JWSAlgorithm.parse(alg);
        if (JWSAlgorithm.Family.HMAC_SHA.contains(a)) {
            if (hmac == null) {
                throw new TokenRejected(Reason.NO_HS_SECRET);
            }
            if (!hmac.supportedJWSAlgorithms().contains(a)) {
                // Under auto, a secret long enough for HS256 but not for this algorithm (RFC 7518 3.2).
                throw new TokenRejected(Reason.UNSUPPORTED_ALGORITHM);
            }
            return jwt -> run(jwt, hmac);
        }
        boolean rsa = JWSAlgorithm.Family.RSA.contains(a);
        if (staticKey != null) {
            if (rsa != staticKeyIsRsa) {
                throw new TokenRejected(rsa ? Reason.NOT_AN_RSA_KEY : Reason.NOT_AN_ED_KEY);
            }
            return jwt -> run(jwt, staticKey);
        }
        JwksKeys.Key key = jwks == null ? null : jwks.lookup(kid, rsa);
        if (key == null) {
            throw new TokenRejected(Reason.UNKNOWN_KEY);
        }
        // A kid naming a key of the other family cannot verify this algorithm: a bad signature.
        return jwt -> key.rsa() == rsa && run(jwt, key.verifier());
    }

    private static boolean run(SignedJWT jwt, JWSVerifier verifier) {
        try {
            return jwt.verify(verifier);
        } catch (JOSEException | IllegalStateException e) {
            return false;
        }
    }

    private static Long seconds(Date d) {
        return d == null ? null : Math.floorDiv(d.getTime(), 1000L);
    }

    private static String role(Object claim) {
        return claim instanceof String s ? s : null;
    }

    private static List<String> roles(Object claim) {
        List<String> out = new ArrayList<>();
        if (claim instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof String s) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /** The JWK form Nimbus verifies Ed25519 with: the raw 32-byte key, the tail of its SubjectPublicKeyInfo. */
    private static OctetKeyPair ed25519(PublicKey key) {
        if (!(key instanceof EdECPublicKey)) {
            throw new IllegalStateException("not an Ed25519 key: " + key.getAlgorithm());
        }
        byte[] spki = key.getEncoded();
        byte[] raw = Arrays.copyOfRange(spki, spki.length - 32, spki.length);
        return new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(raw)).build();
    }
}
