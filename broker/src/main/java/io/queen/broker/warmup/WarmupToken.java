package io.queen.broker.warmup;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.broker.config.AuthSettings;
import io.queen.broker.config.JwtAlgorithm;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;

/**
 * The warm-up's bearer token: an admin token signed with the broker's own {@code JWT_SECRET}, so
 * that the warm-up passes the same verification a client's token does (and warms it up too). It
 * names the issuer and audience the broker checks, and lives only as long as the warm-up may run.
 * A broker that verifies RS or EdDSA tokens only holds a public key and can sign nothing: then
 * there is no token and the warm-up is skipped.
 */
final class WarmupToken {
    static final String SUBJECT = "queen-warmup";

    private WarmupToken() {
    }

    /** Why no token can be signed under {@code auth}, or null when {@link #sign} can. */
    static String unsignable(AuthSettings auth) {
        if (auth.secret() == null) {
            return "authentication is on with JWT_PUBLIC_KEY/JWT_JWKS_URL only, and the broker holds no key to sign"
                    + " its own token (set JWT_SECRET with JWT_ALGORITHM=auto for a warm-up)";
        }
        JwtAlgorithm.Family family = auth.algorithm().family();
        if (family != JwtAlgorithm.Family.HMAC && family != JwtAlgorithm.Family.ANY) {
            return "JWT_ALGORITHM=" + auth.algorithm().spelling() + " accepts no token the broker can sign";
        }
        return null;
    }

    /** An admin token valid for {@code lifetime} from now, in the setting's HS algorithm (HS256 for auto). */
    static String sign(AuthSettings auth, Duration lifetime) {
        String why = unsignable(auth);
        if (why != null) {
            throw new IllegalStateException(why);
        }
        JWSAlgorithm alg = switch (auth.algorithm()) {
            case HS384 -> JWSAlgorithm.HS384;
            case HS512 -> JWSAlgorithm.HS512;
            default -> JWSAlgorithm.HS256;
        };
        Instant now = Instant.now();
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
                .subject(SUBJECT)
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plus(lifetime)))
                .claim(auth.rolesClaim(), auth.roles().admin());
        if (auth.issuer() != null) {
            claims.issuer(auth.issuer());
        }
        if (auth.audience() != null) {
            claims.audience(auth.audience());
        }
        SignedJWT jwt = new SignedJWT(new JWSHeader(alg), claims.build());
        try {
            jwt.sign(new MACSigner(auth.secret()));
        } catch (JOSEException e) {
            // The secret's length was checked at boot against the algorithms the setting takes.
            throw new IllegalStateException("cannot sign the warm-up token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }
}
