package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.Tenants;

import java.nio.charset.StandardCharsets;

/**
 * {@code /auth/me}, {@code /auth/login}, {@code /auth/logout}: the identity surface the reference
 * broker answers to its dashboard when no proxy stands in front. The broker holds no accounts and
 * no sessions, so with authentication off it describes a fixed "standalone" operator (the API is
 * open anyway), and with it on {@code /auth/me} is a 401 and {@code /auth/login} a page saying so.
 * All three are public (see {@link RouteAccess}) so they can answer the question rather than be
 * blocked by it.
 */
public final class AuthHttpService implements HttpService {
    /** The act-as header the dashboard attaches; echoed only so the payload has the proxy's shape. */
    static final String ACT_CLUSTER_HEADER = "x-queen-act-cluster";

    private final boolean authEnabled;
    private final String serverId;

    public AuthHttpService(boolean authEnabled, String serverId) {
        this.authEnabled = authEnabled;
        this.serverId = serverId;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/auth/me", this::me)
             .get("/auth/login", this::login)
             .post("/auth/logout", this::logout);
    }

    private void me(ServerRequest req, ServerResponse res) {
        if (authEnabled) {
            ErrorMapping.send(res, Status.UNAUTHORIZED_401, "auth_required", "auth_required", null);
            return;
        }
        ObjectNode body = Json.object().put("user_id", "standalone").putNull("email").put("tenant_slug", "local")
                .put("is_operator", true).put("operator_enabled", true).put("operator_live", true);
        body.putObject("acting_cluster").put("id", "local").put("slug", "local");
        body.putArray("clusters").addObject().put("id", "local").put("slug", "local").put("role", "admin")
                .put("tenant_slug", "local").put("tenant_id", Tenants.DEFAULT.toString()).put("status", "active")
                .put("cell_slug", serverId);
        body.put("act_cluster_header", ACT_CLUSTER_HEADER).put("role", "admin").putNull("cluster")
                .put("standalone", true);
        Json.send(res, Status.OK_200, body);
    }

    private void login(ServerRequest req, ServerResponse res) {
        if (!authEnabled) {
            // Nothing to sign in to: land on the dashboard's address (a 303, as the reference).
            res.status(Status.SEE_OTHER_303).header(HeaderNames.LOCATION, "/").send();
            return;
        }
        res.status(Status.OK_200).header(HeaderNames.CONTENT_TYPE, "text/html; charset=utf-8")
                .send(AUTH_REQUIRED_PAGE.getBytes(StandardCharsets.UTF_8));
    }

    private void logout(ServerRequest req, ServerResponse res) {
        Json.send(res, Status.OK_200, Json.object().put("ok", true));
    }

    /** Self-contained (no assets: with auth on they would need a token too). */
    private static final String AUTH_REQUIRED_PAGE = """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><title>Queen: authentication required</title></head>
            <body style="font-family: sans-serif; max-width: 36rem; margin: 4rem auto; line-height: 1.5">
            <h1>This broker requires authentication</h1>
            <p>JWT authentication is on (<code>JWT_ENABLED=true</code>). The API takes bearer tokens,
            but the broker keeps no user accounts and no browser sessions, so there is nothing to sign
            in to here.</p>
            <p>Call the API with <code>Authorization: Bearer &lt;token&gt;</code>, or serve the
            dashboard through a proxy that handles sign-in.</p>
            </body>
            </html>
            """;
}
