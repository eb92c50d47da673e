package io.queen.broker.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.kv.KvException;
import io.queen.broker.engine.kv.KvFailure;

import java.util.logging.Logger;

/**
 * Error answers of the KV routes (broker/DESIGN.md, KV store), in the envelope of {@link SurfaceErrors}:
 * refusals by their kind, failures that are not the client's by this table.
 */
final class KvErrors {
    private static final Logger LOG = Logger.getLogger(KvErrors.class.getName());

    private KvErrors() {
    }

    static void send(ServerResponse res, KvException e) {
        Status status = switch (e.kind()) {
            case BAD_REQUEST -> Status.BAD_REQUEST_400;
            case TOO_LARGE -> Status.REQUEST_ENTITY_TOO_LARGE_413;
            case DISABLED -> Status.SERVICE_UNAVAILABLE_503;
            case FORBIDDEN -> Status.FORBIDDEN_403;
            case RATE_LIMITED -> Status.TOO_MANY_REQUESTS_429;
        };
        if (e.kind() == KvException.Kind.DISABLED) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
        } else if (e.kind() == KvException.Kind.RATE_LIMITED) {
            res.header(HeaderNames.RETRY_AFTER, String.valueOf(e.retryAfterSeconds()));
        }
        SurfaceErrors.send(res, status, e.error(), e.reason(), e.detail(), null);
    }

    static final SurfaceErrors.Answer UNAVAILABLE = new SurfaceErrors.Answer(Status.SERVICE_UNAVAILABLE_503, "kv_unavailable",
            "database_unavailable", "the database could not serve the call; retry", true);
    static final SurfaceErrors.Answer BUSY = new SurfaceErrors.Answer(Status.SERVICE_UNAVAILABLE_503, "kv_unavailable",
            "database_busy", "the database could not serve the call in time; retry", true);
    static final SurfaceErrors.Answer INVALID_VALUE = new SurfaceErrors.Answer(Status.BAD_REQUEST_400, "kv_bad_request", "invalid_value",
            "a value in the request cannot be stored (text PostgreSQL cannot hold, such as a NUL)", false);
    static final SurfaceErrors.Answer MISCONFIGURED = new SurfaceErrors.Answer(Status.INTERNAL_SERVER_ERROR_500, "kv_misconfigured",
            "kv_misconfigured", "the broker's schema is not in place", false);
    static final SurfaceErrors.Answer INTERNAL = new SurfaceErrors.Answer(Status.INTERNAL_SERVER_ERROR_500, "kv_error", "internal_error",
            "internal error", false);

    /** The answer to each kind of failure ({@link KvFailure}), in the KV envelope. */
    static SurfaceErrors.Answer classify(Throwable e) {
        return switch (KvFailure.of(e)) {
            case UNAVAILABLE -> UNAVAILABLE;
            case BUSY -> BUSY;
            case INVALID_VALUE -> INVALID_VALUE;
            case MISCONFIGURED -> MISCONFIGURED;
            case INTERNAL -> INTERNAL;
        };
    }

    static void failure(ServerRequest req, ServerResponse res, Throwable e) {
        SurfaceErrors.failure(req, res, e, classify(e), LOG);
    }
}
