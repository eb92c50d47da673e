package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The envelope the KV and timer routes answer errors in, the reference broker's
 * {@code {"error": <code>, "reason"?, "detail"?}} with {@code code} repeating {@code error}, and how a
 * failure that is not the client's leaves in it: an {@code errorId} that the one log line with the
 * full detail carries too, {@code Retry-After} when retrying helps, never the database's or the JVM's
 * text. Each surface ({@link KvErrors}, {@link TimerErrors}) owns only its table of answers.
 */
final class SurfaceErrors {
    private SurfaceErrors() {
    }

    /** How a failure is answered: status, code, reason, the detail sentence, and whether to retry. */
    record Answer(Status status, String error, String reason, String detail, boolean retry) {
    }

    static void failure(ServerRequest req, ServerResponse res, Throwable e, Answer answer, Logger log) {
        String errorId = ErrorMapping.newErrorId();
        String where = req.prologue().method().text() + " " + LogText.of(req.path().path());
        String what = answer.error() + (answer.detail() == null ? "" : ": " + answer.detail());
        if (answer.status().code() >= 500 && !answer.retry()) {
            log.log(Level.SEVERE, "errorId=" + errorId + " " + where + ": " + what, e);
        } else {
            log.warning("errorId=" + errorId + " " + where + ": " + what + ": " + e);
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
