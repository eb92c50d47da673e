package io.queen.broker.engine.auth;

import io.queen.broker.config.AuthSettings;

import java.time.Instant;
import java.time.InstantSource;

/**
 * Who a bearer token is (broker/DESIGN.md, Authentication): {@link TokenVerifier} checks it,
 * {@link VerifiedTokens} remembers the answer until the token expires, {@link JwksKeys} holds the
 * endpoint's keys when there is one; {@link WarmupPass} lets the broker's own warm-up in. Built
 * only when {@code JWT_ENABLED} is on.
 */
public final class Authenticator implements AutoCloseable {
    private final AuthSettings settings;
    private final InstantSource clock;
    private final VerifiedTokens verified = new VerifiedTokens();
    private final JwksKeys jwks;
    private final TokenVerifier verifier;
    private final WarmupPass warmupPass = new WarmupPass();

    Authenticator(AuthSettings settings, InstantSource clock) {
        this.settings = settings;
        this.clock = clock;
        // The JWKS keys are consulted only when no static PEM is set (AuthSettings refuses both).
        this.jwks = settings.jwksUrl() == null ? null : new JwksKeys(settings.jwksUrl(), settings.jwksTimeout(),
                settings.jwksRefreshInterval(), clock, verified::clear);
        this.verifier = new TokenVerifier(settings, clock, jwks);
    }

    /** Fetches the JWKS keys (if any) before returning, and keeps them fresh in the background. */
    public static Authenticator start(AuthSettings settings) {
        return start(settings, InstantSource.system());
    }

    public static Authenticator start(AuthSettings settings, InstantSource clock) {
        if (!settings.enabled()) {
            throw new IllegalArgumentException("authentication is disabled");
        }
        Authenticator a = new Authenticator(settings, clock);
        if (a.jwks != null) {
            a.jwks.start();
        }
        return a;
    }

    /** The caller a token names; a token seen before and not yet expired is not verified again. */
    public Identity authenticate(String token) throws TokenRejected {
        if (warmupPass.matches(token)) {
            return WarmupPass.IDENTITY;
        }
        Instant now = clock.instant();
        Identity known = verified.get(token, now);
        if (known != null) {
            return known;
        }
        TokenVerifier.Verified v = verifier.verify(token);
        verified.put(token, v, now);
        return v.identity();
    }

    /**
     * A bearer value for the broker's own warm-up, an admin caller until {@link #revokeWarmupPass};
     * it never leaves the process except to its own listener.
     */
    public String issueWarmupPass() {
        return warmupPass.issue();
    }

    public void revokeWarmupPass() {
        warmupPass.revoke();
    }

    public AuthSettings settings() {
        return settings;
    }

    /** How many tokens are remembered (for tests and the boot log). */
    int rememberedTokens() {
        return verified.size();
    }

    @Override
    public void close() {
        if (jwks != null) {
            jwks.close();
        }
    }
}
