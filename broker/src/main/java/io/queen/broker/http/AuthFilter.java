package io.queen.broker.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.queen.broker.config.AuthSettings;
import io.queen.broker.engine.auth.AccessLevel;
import io.queen.broker.engine.auth.Authenticator;
import io.queen.broker.engine.auth.Identity;
import io.queen.broker.engine.auth.TokenRejected;

import java.util.Optional;

/**
 * With {@code JWT_ENABLED} on, before any route (broker/DESIGN.md, Authentication): the route's
 * level comes from {@link RouteAccess}, a skipped or public path passes, anything else needs
 * {@code Authorization: Bearer <jwt>} (the prefix in any case, or the bare token) whose roles grant
 * the level. A refusal is the reference's text in this broker's error shape:
 * {@code 401 {"error":"Token has expired","code":"token_expired"}},
 * {@code 403 {"error":"Insufficient permissions","code":"forbidden"}}; the broker's own key
 * problems are a 500. The verified caller is kept on the request for the routes that stamp it
 * ({@link #subject}). Not installed at all with authentication off.
 *
 * <p>A path that is not in its plain form (an empty segment, a {@code .} or {@code ..} segment)
 * is refused with 400 before it is classified, so no spelling of an admin route can pass as a
 * lesser one or as a skipped prefix. No route of the reference is spelled that way.
 */
public final class AuthFilter implements Filter {
    private static final HeaderName WWW_AUTHENTICATE = HeaderNames.create("WWW-Authenticate");

    private final Authenticator authenticator;
    private final AuthSettings settings;

    public AuthFilter(Authenticator authenticator) {
        this.authenticator = authenticator;
        this.settings = authenticator.settings();
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        String path = req.path().path();
        if (!plain(path)) {
            ErrorMapping.send(res, Status.BAD_REQUEST_400, "bad_request",
                    "invalid path: empty, . and .. segments are not accepted", null);
            return;
        }
        if (settings.skips(path)) {
            chain.proceed();
            return;
        }
        AccessLevel level = RouteAccess.of(req.prologue().method().text(), path);
        if (level == AccessLevel.PUBLIC) {
            chain.proceed();
            return;
        }
        Optional<String> header = req.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty()) {
            refuse(res, TokenRejected.Reason.MISSING);
            return;
        }
        Identity caller;
        try {
            caller = authenticator.authenticate(bearer(header.get()));
        } catch (TokenRejected e) {
            refuse(res, e.reason());
            return;
        }
        if (!caller.allows(level)) {
            ErrorMapping.send(res, Status.FORBIDDEN_403, "forbidden", "Insufficient permissions", null);
            return;
        }
        req.context().register(caller);
        chain.proceed();
    }

    /**
     * The verified token's {@code sub} for this request, or null: authentication off, a public or
     * skipped path, or a token without one. The only source of a message's producerSub.
     */
    static String subject(ServerRequest req) {
        return req.context().get(Identity.class).map(Identity::subject).orElse(null);
    }

    /** "Bearer x" in any case, or the bare token some clients send (the reference accepts both). */
    static String bearer(String header) {
        return header.length() > 7 && header.regionMatches(true, 0, "bearer ", 0, 7) ? header.substring(7) : header;
    }

    /** No empty, {@code .} or {@code ..} segment; only the root may end in a slash. No allocation: every request asks. */
    static boolean plain(String path) {
        int n = path.length();
        if (n == 0 || path.charAt(0) != '/') {
            return false;
        }
        if (n == 1) {
            return true;
        }
        int start = 1;
        for (int i = 1; i <= n; i++) {
            if (i == n || path.charAt(i) == '/') {
                int len = i - start;
                if (len == 0 || (len == 1 && path.charAt(start) == '.')
                        || (len == 2 && path.charAt(start) == '.' && path.charAt(start + 1) == '.')) {
                    return false;
                }
                start = i + 1;
            }
        }
        return true;
    }

    private static void refuse(RoutingResponse res, TokenRejected.Reason reason) {
        if (reason.serverSide()) {
            ErrorMapping.send(res, Status.INTERNAL_SERVER_ERROR_500, "auth_misconfigured", reason.message(), null);
            return;
        }
        res.header(WWW_AUTHENTICATE, reason == TokenRejected.Reason.MISSING ? "Bearer" : "Bearer error=\"invalid_token\"");
        ErrorMapping.send(res, Status.UNAUTHORIZED_401, code(reason), reason.message(), null);
    }

    /** A stable word per refusal, beside the reference's sentence. */
    static String code(TokenRejected.Reason reason) {
        return switch (reason) {
            case MISSING -> "auth_required";
            case BAD_HEADER -> "bad_token";
            case UNSUPPORTED_ALGORITHM -> "unsupported_token_algorithm";
            case INVALID_SIGNATURE -> "invalid_token_signature";
            case EXPIRED -> "token_expired";
            case NOT_YET_VALID -> "token_not_yet_valid";
            case ISSUED_IN_FUTURE -> "token_issued_in_future";
            case INVALID_ISSUER -> "invalid_token_issuer";
            case INVALID_AUDIENCE -> "invalid_token_audience";
            case UNKNOWN_KEY -> "unknown_key_id";
            case NO_HS_SECRET, NOT_AN_RSA_KEY, NOT_AN_ED_KEY -> "auth_misconfigured";
        };
    }
}
