package io.queen.broker.engine.auth;

/**
 * A token that does not authenticate, and why, in the reference broker's words (clients and
 * operators match on them). {@link Reason#serverSide()} marks the reasons that are the broker's
 * configuration and not the caller's token.
 */
public final class TokenRejected extends Exception {
    public enum Reason {
        MISSING("Authentication required"),
        BAD_HEADER("Bad token header"),
        UNSUPPORTED_ALGORITHM("Unsupported token algorithm"),
        INVALID_SIGNATURE("Invalid token signature"),
        EXPIRED("Token has expired"),
        NOT_YET_VALID("Token not yet valid"),
        ISSUED_IN_FUTURE("Token issued in the future"),
        INVALID_ISSUER("Invalid token issuer"),
        INVALID_AUDIENCE("Invalid token audience"),
        UNKNOWN_KEY("Unknown key ID"),
        NO_HS_SECRET("HS secret not configured", true),
        NOT_AN_RSA_KEY("invalid RSA public key PEM", true),
        NOT_AN_ED_KEY("invalid Ed public key PEM", true);

        private final String message;
        private final boolean serverSide;

        Reason(String message) {
            this(message, false);
        }

        Reason(String message, boolean serverSide) {
            this.message = message;
            this.serverSide = serverSide;
        }

        public String message() {
            return message;
        }

        public boolean serverSide() {
            return serverSide;
        }
    }

    private final Reason reason;

    public TokenRejected(Reason reason) {
        super(reason.message(), null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
