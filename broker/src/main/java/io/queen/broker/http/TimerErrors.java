package io.queen.broker.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.kv.KvFailure;
import io.queen.broker.engine.timers.TimerException;

import java.util.logging.Logger;

/**
 * Error answers of the timer routes (broker/DESIGN.md, Timers), in the envelope of
 * {@link SurfaceErrors}: refusals by their kind, failures that are not the client's by this table.
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
            case FORBIDDEN, QUOTA -> Status.FORBIDDEN_403;
            case RATE_LIMITED -> Status.TOO_MANY_REQUESTS_429;
            case DISABLED -> Status.SERVICE_UNAVAILABLE_503;
        };
        if (e.kind() == TimerException.Kind.RATE_LIMITED) {
            res.header(HeaderNames.RETRY_AFTER, String.valueOf(e.retryAfterSeconds()));
        }
        if (e.kind() == TimerException.Kind.DISABLED) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
            if (e.mixedBatch()) {
                res.header(HINT, "mixed batch refused whole; use DELETE /api/v1/timers/:queue/*timerKey"
                        + " for cancels, which is never blocked");
            }
        }
        SurfaceErrors.send(res, status, e.error(), e.reason(), e.detail(), null);
    }

    private static final String RETRY = "the database could not serve the call; retry";
    static final SurfaceErrors.Answer UNAVAILABLE = new SurfaceErrors.Answer(Status.SERVICE_UNAVAILABLE_503,
            "timers_unavailable", "database_unavailable", RETRY, true);
    static final SurfaceErrors.Answer BUSY = new SurfaceErrors.Answer(Status.SERVICE_UNAVAILABLE_503,
            "timers_unavailable", "database_busy", RETRY, true);
    static final SurfaceErrors.Answer INVALID_VALUE = new SurfaceErrors.Answer(Status.BAD_REQUEST_400,
            "timers_bad_request", "invalid_value", null, false);
    static final SurfaceErrors.Answer MISCONFIGURED = new SurfaceErrors.Answer(Status.INTERNAL_SERVER_ERROR_500,
            "timers_misconfigured", "timers_misconfigured", null, false);
    static final SurfaceErrors.Answer INTERNAL = new SurfaceErrors.Answer(Status.INTERNAL_SERVER_ERROR_500,
            "timers_error", "internal_error", null, false);

    static void failure(ServerRequest req, ServerResponse res, Throwable e) {
        SurfaceErrors.Answer answer = switch (KvFailure.of(e)) {
            case UNAVAILABLE -> UNAVAILABLE;
            case BUSY -> BUSY;
            case INVALID_VALUE -> INVALID_VALUE;
            case MISCONFIGURED -> MISCONFIGURED;
            case INTERNAL -> INTERNAL;
        };
        SurfaceErrors.failure(req, res, e, answer, LOG);
    }
}
