package io.queen.operator.support;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

/** Tokens a test hands out as an application or an administrator would mint them (HS256, an hour). */
public final class TestTokens {
    private TestTokens() {
    }

    public static String hs256(String secret, String role) {
        Instant now = Instant.now();
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("test-" + role).claim("role", role)
                .issueTime(Date.from(now)).expirationTime(Date.from(now.plus(Duration.ofHours(1)))).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
        try {
            jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (JOSEException e) {
            throw new IllegalArgumentException("cannot sign a test token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }
}
