package io.queen.broker.http;

import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.Version;
import io.queen.broker.engine.DatabaseHealth;

import java.sql.SQLException;
import java.util.logging.Logger;

/**
 * {@code GET /health}: readiness, a real database round trip. {@code GET /status}: liveness, no
 * database access. Both are public. The {@code engine} literal is the reference's and clients may
 * read it.
 */
public final class HealthHttpService implements HttpService {
    private static final Logger LOG = Logger.getLogger(HealthHttpService.class.getName());
    static final String ENGINE = "segments-rust";

    private final DatabaseHealth health;

    public HealthHttpService(DatabaseHealth health) {
        this.health = health;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/health", this::health)
             .get("/status", this::status);
    }

    private void health(ServerRequest req, ServerResponse res) {
        var body = Json.object();
        try {
            health.ping();
            body.put("status", "healthy").put("database", "connected");
            body.put("engine", ENGINE).put("version", Version.VALUE);
            Json.send(res, Status.OK_200, body);
        } catch (SQLException | RuntimeException e) {
            LOG.warning("health check: database " + health.address() + " does not answer: " + e.getMessage());
            body.put("status", "unhealthy").put("database", "disconnected");
            body.put("engine", ENGINE).put("version", Version.VALUE);
            // The driver's text stays in the log line above; the answer says what failed in plain terms.
            body.put("reason", "the database does not answer");
            Json.send(res, Status.SERVICE_UNAVAILABLE_503, body);
        }
    }

    private void status(ServerRequest req, ServerResponse res) {
        Json.send(res, Status.OK_200, Json.object().put("status", "ok").put("engine", ENGINE));
    }
}
