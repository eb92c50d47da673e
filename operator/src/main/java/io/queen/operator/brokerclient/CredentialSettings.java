package io.queen.operator.brokerclient;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How the operator authenticates to the broker: one source at most, chosen by which variable is
 * set ({@code OperatorSettings} reads and validates them).
 *
 * @param token         the token itself ({@code QUEEN_OPERATOR_TOKEN}); only for {@link Source#TOKEN}
 * @param tokenFile     a file holding the token ({@code QUEEN_OPERATOR_TOKEN_FILE}); only for {@link Source#TOKEN_FILE}
 * @param signing       how to sign the operator's own admin tokens; only for {@link Source#SIGNED}
 * @param allowInsecure send credentials over plain HTTP to a non-loopback broker
 *                      ({@code QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS})
 */
public record CredentialSettings(Source source, String token, Path tokenFile, Signing signing, boolean allowInsecure) {

    public enum Source { NONE, TOKEN, TOKEN_FILE, SIGNED }

    /** Without credentials, for a broker with authentication off. */
    public static final CredentialSettings NONE = new CredentialSettings(Source.NONE, null, null, null, false);

    /**
     * The operator's own admin tokens, signed with the broker's HMAC secret.
     *
     * @param algorithm HS256, HS384 or HS512
     * @param secret    the key's bytes (UTF-8 of {@code QUEEN_OPERATOR_JWT_SECRET}), long enough for the algorithm
     * @param issuer    the {@code iss} claim, null for none (set it when the broker checks {@code JWT_ISSUER})
     * @param audience  the {@code aud} claim, null for none (set it when the broker checks {@code JWT_AUDIENCE})
     * @param roleClaim the claim carrying the role (the broker's {@code JWT_ROLES_CLAIM}, default {@code role})
     * @param role      the broker's admin role value ({@code JWT_ROLE_ADMIN}, default {@code admin})
     * @param lifetime  how long one token is valid; a new one is signed once a third of it is left
     */
    public record Signing(String algorithm, byte[] secret, String issuer, String audience, String roleClaim, String role,
                          Duration lifetime) {
        /** Never prints the secret. */
        @Override
        public String toString() {
            return "Signing[" + algorithm + ", secret " + secret.length + " bytes, issuer=" + issuer + ", audience="
                    + audience + ", " + roleClaim + "=" + role + ", lifetime=" + lifetime + "]";
        }
    }

    /** Never prints the token or the secret. */
    @Override
    public String toString() {
        return "CredentialSettings[" + source + (tokenFile == null ? "" : " " + tokenFile)
                + (signing == null ? "" : " " + signing) + ", allowInsecure=" + allowInsecure + "]";
    }
}
