package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.kv.KvFailure;
import io.queen.broker.engine.timers.TimerException;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Error answers of the timer routes (broker/DESIGN.md, Timers), in the reference broker's timer
 * envelope {@code {"error": <code>, "reason"?, "detail"?}} with {@code code} repeating {@code error},
 * as the KV routes answer ({@link KvErrors}). Failures that are not the client's carry an
 * {@code errorId}, which the one log line with the detail carries too, and never the database's text.
 */
final class TimerErrors {
    private static final Logger LOG = Logger.getLogger(TimerErrors.class.getName());
    /** Set on a refused mixed batch: its cancels have a route the schedule switch never blocks. */
    static final HeaderName HINT = HeaderNames.create("x-queen-timers-hint");

    private TimerErrors() {
    }

    static void send(ServerResponse res, TimerException e) {
        Status status = switch (e.kind()) {
            case BAD_REQUEST -> Status.BAD_REQUEST_400;
            case TOO_LARGE -> Status.REQUEST_ENTITY_TOO_LARGE_413;
            case FORBIDDEN -> Status.FORBIDDEN_403;
            case DISABLED -> Status.SERVICE_UNAVAILABLE_503;
        };
        if (e.kind() == TimerException.Kind.DISABLED) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
            if (e.mixedBatch()) {
                res.header(HINT, "mixed batch refused whole; use DELETE /api/v1/timers/:queue/*timerKey"
                        + " for cancels, which is never blocked");
            }
        }
        send(res, status, e.error(), e.reason(), e.detail(), null);
    }

    static void failure(ServerRequest req, ServerResponse res, Throwable e) {
        String errorId = ErrorMapping.newErrorId();
        String where = req.prologue().method().text() + " " + LogText.of(req.path().path());
        Status status;
        String code;
        String reason;
        boolean retry = false;
        switch (KvFailure.of(e)) {
            case UNAVAILABLE -> {
                status = Status.SERVICE_UNAVAILABLE_503;
                code = "timers_unavailable";
                reason = "database_unavailable";
                retry = true;
            }
            case BUSY -> {
                status = Status.SERVICE_UNAVAILABLE_503;
                code = "timers_unavailable";
                reason = "database_busy";
                retry = true;
            }
            case INVALID_VALUE -> {
                status = Status.BAD_REQUEST_400;
                code = "timers_bad_request";
                reason = "invalid_value";
            }
            case MISCONFIGURED -> {
                status = Status.INTERNAL_SERVER_ERROR_500;
                code = "timers_misconfigured";
                reason = "timers_misconfigured";
            }
            default -> {
                status = Status.INTERNAL_SERVER_ERROR_500;
                code = "timers_error";
                reason = "internal_error";
            }
        }
        if (status.code() >= 500 && !retry) {
            LOG.log(Level.SEVERE, "errorId=" + errorId + " " + where + ": " + code, e);
        } else {
            LOG.warning("errorId=" + errorId + " " + where + ": " + code + ": " + e);
        }
        if (retry) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
        }
        send(res, status, code, reason, retry ? "the database could not serve the call; retry" : null, errorId);
    }

    static void send(ServerResponse res, Status status, String error, String reason, String detail, String errorId) {
        ObjectNode body = Json.object().put("error", error).put("code", error);
        if (reason != null) {
            body.put("reason", reason);
        }
        if (detail != null) {
            body.put("detail", detail);
        }
        if (errorId != null) {
            body.put("errorId", errorId);
        }
        Json.send(res, status, body);
    }
}
