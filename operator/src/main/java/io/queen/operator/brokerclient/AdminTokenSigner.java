package io.queen.operator.brokerclient;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;

import java.time.Clock;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;
import java.util.UUID;

/**
 * Signs the operator's own short-lived admin tokens with the broker's HMAC secret (Nimbus does the
 * signing). A token is reused until a third of its lifetime is left, then replaced, so a call never
 * carries a token about to expire and a leaked one is soon worthless. A 401 drops it at once (the
 * broker's secret may have changed under a restarted pod, or the clocks disagree).
 */
final class AdminTokenSigner implements BrokerCredentials {
    static final String SUBJECT = "queen-operator";

    private final CredentialSettings.Signing signing;
    private final JWSAlgorithm algorithm;
    private final MACSigner signer;
    private final Clock clock;
    private String token;
    private Instant renewAt = Instant.MIN;

    AdminTokenSigner(CredentialSettings.Signing signing, Clock clock) {
        this.signing = signing;
        this.algorithm = JWSAlgorithm.parse(signing.algorithm());
        this.clock = clock;
        try {
            this.signer = new MACSigner(signing.secret());
        } catch (JOSEException e) {
            // OperatorSettings checks the length first, so this is a bug, not a user's mistake.
            throw new IllegalStateException("the signing secret was not checked: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized Optional<String> bearerToken() {
        Instant now = clock.instant();
        if (token == null || !now.isBefore(renewAt)) {
            token = sign(now);
            renewAt = now.plus(signing.lifetime().minus(signing.lifetime().dividedBy(3)));
        }
        return Optional.of(token);
    }

    @Override
    public synchronized void refused() {
        token = null;
    }

    @Override
    public String describe() {
        return "admin tokens signed with QUEEN_OPERATOR_JWT_SECRET (" + signing.algorithm() + ", "
                + signing.roleClaim() + "=" + signing.role() + ")";
    }

    private String sign(Instant now) {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
                .subject(SUBJECT)
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plus(signing.lifetime())))
                .jwtID(UUID.randomUUID().toString())
                .claim(signing.roleClaim(), signing.role());
        if (signing.issuer() != null) {
            claims.issuer(signing.issuer());
        }
        if (signing.audience() != null) {
            claims.audience(signing.audience());
        }
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(algorithm).type(JOSEObjectType.JWT).build(), claims.build());
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new BrokerCredentialsException(BrokerCredentialsException.UNAVAILABLE, false,
                    "cannot sign the operator's admin token (" + signing.algorithm() + "): " + e.getMessage());
        }
        return jwt.serialize();
    }
}
