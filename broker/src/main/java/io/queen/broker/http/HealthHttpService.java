package io.queen.broker.http;

import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.Version;
import io.queen.broker.engine.DatabaseHealth;

import java.sql.SQLException;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * {@code GET /health}: a real database round trip. {@code GET /ready}: the same once the broker's
 * warm-up ended (503 {@code "status":"warming"} before), the readiness a Service routes by; an
 * addition to the reference's routes. {@code GET /status}: liveness, no database access. The
 * {@code engine} literal is the reference's and clients may read it.
 */
public final class HealthHttpService implements HttpService {
    private static final Logger LOG = Logger.getLogger(HealthHttpService.class.getName());
    static final String ENGINE = "segments-rust";

    private final DatabaseHealth health;
    private final BooleanSupplier warm;

    /** {@code warm}: true once the warm-up ended or when there is none (broker/DESIGN.md, Memory and start-up). */
    public HealthHttpService(DatabaseHealth health, BooleanSupplier warm) {
        this.health = health;
        this.warm = warm;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/health", this::health)
             .get("/ready", this::ready)
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

    private void ready(ServerRequest req, ServerResponse res) {
        if (!warm.getAsBoolean()) {
            Json.send(res, Status.SERVICE_UNAVAILABLE_503, Json.object().put("status", "warming")
                    .put("engine", ENGINE).put("version", Version.VALUE)
                    .put("reason", "the broker is warming up before it takes traffic (QUEEN_WARMUP_MESSAGES)"));
            return;
        }
        health(req, res);
    }

    private void status(ServerRequest req, ServerResponse res) {
        Json.send(res, Status.OK_200, Json.object().put("status", "ok").put("engine", ENGINE));
    }
}
