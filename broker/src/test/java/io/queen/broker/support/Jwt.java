package io.queen.broker.support;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.OctetKeyPairGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;

/** Tokens for tests, signed by Nimbus, plus the forged shapes an attacker would send. */
public final class Jwt {
    /** 32 bytes: the shortest secret HS256 takes. */
    public static final String SECRET = "queen-test-secret-0123456789abcd";

    private Jwt() {
    }

    /** A claims builder with a subject and a single role claim, valid for an hour from {@code now}. */
    public static JWTClaimsSet.Builder claims(String sub, String role, Instant now) {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder().issueTime(Date.from(now))
                .expirationTime(Date.from(now.plusSeconds(3600)));
        if (sub != null) {
            b.subject(sub);
        }
        if (role != null) {
            b.claim("role", role);
        }
        return b;
    }

    public static String hs(String alg, String secret, JWTClaimsSet claims) {
        return sign(new JWSHeader.Builder(JWSAlgorithm.parse(alg)).type(JOSEObjectType.JWT).build(), claims,
                mac(secret.getBytes(StandardCharsets.UTF_8)));
    }

    public static String hs256(JWTClaimsSet claims) {
        return hs("HS256", SECRET, claims);
    }

    /** A read-write (or other role) HS256 token for {@code sub}, an hour long. */
    public static String hs256(String sub, String role) {
        return hs256(claims(sub, role, Instant.now()).build());
    }

    public static String rs(String alg, RSAKey key, JWTClaimsSet claims) {
        try {
            return sign(new JWSHeader.Builder(JWSAlgorithm.parse(alg)).keyID(key.getKeyID()).build(), claims,
                    new RSASSASigner(key));
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    public static String ed(OctetKeyPair key, JWTClaimsSet claims) {
        try {
            return sign(new JWSHeader.Builder(JWSAlgorithm.EdDSA).keyID(key.getKeyID()).build(), claims,
                    new Ed25519Signer(key));
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    /** An unsecured token: header {"alg":"none"}, no signature. */
    public static String none(JWTClaimsSet claims) {
        return b64("{\"alg\":\"none\",\"typ\":\"JWT\"}") + "." + b64(claims.toString()) + ".";
    }

    /** The classic algorithm-confusion forgery: HS256 keyed with the RSA public key's PEM text. */
    public static String hsWithPublicKeyAsSecret(RSAKey key, JWTClaimsSet claims) {
        try {
            String pem = pem(key.toRSAPublicKey().getEncoded());
            return sign(new JWSHeader(JWSAlgorithm.HS256), claims, mac(pem.getBytes(StandardCharsets.UTF_8)));
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    /** The same token with one character of its signature changed. */
    public static String tamper(String token) {
        char last = token.charAt(token.length() - 2);
        return token.substring(0, token.length() - 2) + (last == 'A' ? 'B' : 'A') + token.charAt(token.length() - 1);
    }

    /** A token whose payload is replaced, its signature kept: what a caller elevating itself would send. */
    public static String withPayload(String token, Map<String, Object> payload) {
        String[] parts = token.split("\\.");
        return parts[0] + "." + b64(com.nimbusds.jose.util.JSONObjectUtils.toJSONString(payload)) + "." + parts[2];
    }

    public static RSAKey rsaKey(String kid) {
        try {
            return new RSAKeyGenerator(2048).keyID(kid).generate();
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    public static OctetKeyPair edKey(String kid) {
        try {
            return new OctetKeyPairGenerator(Curve.Ed25519).keyID(kid).generate();
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    /** The JWKS document publishing the public halves of {@code keys}. */
    public static String jwks(List<?> keys) {
        StringBuilder out = new StringBuilder("{\"keys\":[");
        for (int i = 0; i < keys.size(); i++) {
            Object k = keys.get(i);
            String pub = k instanceof RSAKey r ? r.toPublicJWK().toJSONString()
                    : k instanceof OctetKeyPair o ? o.toPublicJWK().toJSONString() : k.toString();
            out.append(i == 0 ? "" : ",").append(pub);
        }
        return out.append("]}").toString();
    }

    /** The SubjectPublicKeyInfo of an Ed25519 key: a fixed 12-byte prefix, then the raw 32-byte key. */
    public static byte[] edSpki(OctetKeyPair key) {
        byte[] prefix = java.util.HexFormat.of().parseHex("302a300506032b6570032100");
        byte[] raw = key.getX().decode();
        byte[] out = java.util.Arrays.copyOf(prefix, prefix.length + raw.length);
        System.arraycopy(raw, 0, out, prefix.length, raw.length);
        return out;
    }

    public static String pem(byte[] spki) {
        return "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(spki) + "\n-----END PUBLIC KEY-----\n";
    }

    private static JWSSigner mac(byte[] secret) {
        try {
            return new MACSigner(secret);
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
    }

    private static String sign(JWSHeader header, JWTClaimsSet claims, JWSSigner signer) {
        SignedJWT jwt = new SignedJWT(header, claims);
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new AssertionError(e);
        }
        return jwt.serialize();
    }

    private static String b64(String json) {
        return Base64URL.encode(json.getBytes(StandardCharsets.UTF_8)).toString();
    }
}
