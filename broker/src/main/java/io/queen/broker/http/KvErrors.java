package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.kv.KvException;
import io.queen.broker.engine.kv.KvFailure;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Error answers of the KV routes (broker/DESIGN.md, KV store). The KV surface has its own envelope,
 * the reference broker's {@code {"error": <code>, "reason"?, "detail"?}}, where {@code error} is the
 * stable code clients branch on; {@code code} repeats it, as every other answer of this broker has
 * one. Failures that are not the client's follow {@link ErrorMapping}: a status and a code in the
 * client's terms, an {@code errorId} that the one log line with the full detail carries too, and never
 * the database's or the JVM's text.
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
        };
        if (e.kind() == KvException.Kind.DISABLED) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
        }
        send(res, status, e.error(), e.reason(), e.detail(), null);
    }

    /** How a failure is answered: status, code, reason, the detail sentence, and whether to retry. */
    record Answer(Status status, String error, String reason, String detail, boolean retry) {
    }

    static final Answer UNAVAILABLE = new Answer(Status.SERVICE_UNAVAILABLE_503, "kv_unavailable",
            "database_unavailable", "the database could not serve the call; retry", true);
    static final Answer BUSY = new Answer(Status.SERVICE_UNAVAILABLE_503, "kv_unavailable",
            "database_busy", "the database could not serve the call in time; retry", true);
    static final Answer INVALID_VALUE = new Answer(Status.BAD_REQUEST_400, "kv_bad_request", "invalid_value",
            "a value in the request cannot be stored (text PostgreSQL cannot hold, such as a NUL)", false);
    static final Answer MISCONFIGURED = new Answer(Status.INTERNAL_SERVER_ERROR_500, "kv_misconfigured",
            "kv_misconfigured", "the broker's schema is not in place", false);
    static final Answer INTERNAL = new Answer(Status.INTERNAL_SERVER_ERROR_500, "kv_error", "internal_error",
            "internal error", false);

    /** The answer to each kind of failure ({@link KvFailure}), in the KV envelope. */
    static Answer classify(Throwable e) {
        return switch (KvFailure.of(e)) {
            case UNAVAILABLE -> UNAVAILABLE;
            case BUSY -> BUSY;
            case INVALID_VALUE -> INVALID_VALUE;
            case MISCONFIGURED -> MISCONFIGURED;
            case INTERNAL -> INTERNAL;
        };
    }

    static void failure(ServerRequest req, ServerResponse res, Throwable e) {
        String errorId = ErrorMapping.newErrorId();
        String where = req.prologue().method().text() + " " + LogText.of(req.path().path());
        Answer answer = classify(e);
        if (answer.status().code() >= 500 && !answer.retry()) {
            LOG.log(Level.SEVERE, "errorId=" + errorId + " " + where + ": " + answer.error() + ": " + answer.detail(), e);
        } else {
            LOG.warning("errorId=" + errorId + " " + where + ": " + answer.error() + ": " + e);
        }
        if (answer.retry()) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
        }
        send(res, answer.status(), answer.error(), answer.reason(), answer.detail(), errorId);
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
