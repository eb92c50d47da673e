package io.queen.broker.http;

import io.helidon.http.HttpException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.queen.broker.store.DatabaseUnavailableException;
import io.queen.broker.store.SqlStates;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.logging.Level;
import java.util.logging.Logger;

/** The one place that turns exceptions into HTTP status codes and {"error": "..."} bodies. */
public final class ErrorMapping {
    private static final Logger LOG = Logger.getLogger(ErrorMapping.class.getName());

    private ErrorMapping() {
    }

    public static void register(HttpRouting.Builder routing) {
        routing.error(BadRequestException.class, (req, res, e) -> Json.error(res, Status.BAD_REQUEST_400, e.getMessage()));
        routing.error(NotFoundException.class, (req, res, e) -> Json.error(res, Status.NOT_FOUND_404, e.getMessage()));
        routing.error(DatabaseUnavailableException.class, (req, res, e) -> {
            LOG.warning(req.prologue().method() + " " + req.path().path() + ": " + e.getMessage());
            Json.error(res, Status.SERVICE_UNAVAILABLE_503, "database unavailable");
        });
        routing.error(SQLException.class, (req, res, e) -> {
            if (e instanceof SQLTransientConnectionException) {
                // Hikari's "no connection within the timeout": the reference answers 500 {"error":"pool"}.
                LOG.warning(req.prologue().method() + " " + req.path().path() + ": no database connection: " + e.getMessage());
                Json.error(res, Status.INTERNAL_SERVER_ERROR_500, "pool");
            } else if (SqlStates.isConnectionFailure(e)) {
                LOG.warning(req.prologue().method() + " " + req.path().path() + ": database connection lost: " + e.getMessage());
                Json.error(res, Status.SERVICE_UNAVAILABLE_503, "database unavailable");
            } else {
                LOG.log(Level.SEVERE, req.prologue().method() + " " + req.path().path() + " failed", e);
                Json.error(res, Status.INTERNAL_SERVER_ERROR_500, e.getMessage());
            }
        });
        routing.error(RequestException.class, (req, res, e) -> Json.error(res, e.status(), e.getMessage()));
        // Helidon's own status exceptions, e.g. its 404 for a path no route matches (outside /api,
        // which has its own 404): left to the RuntimeException handler they became a 500, which
        // clients retry.
        routing.error(HttpException.class, (req, res, e) -> Json.error(res, e.status(), e.getMessage()));
        routing.error(RuntimeException.class, (req, res, e) -> {
            LOG.log(Level.SEVERE, req.prologue().method() + " " + req.path().path() + " failed", e);
            Json.error(res, Status.INTERNAL_SERVER_ERROR_500, String.valueOf(e.getMessage()));
        });
    }
}
