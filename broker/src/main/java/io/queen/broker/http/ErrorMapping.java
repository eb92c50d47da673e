package io.queen.broker.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.HttpException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one place that turns exceptions into HTTP answers: {@code {"error": "...", "code": "..."}}.
 * A client's mistake is a 4xx naming what was wrong. Anything else is answered in the client's terms
 * with an {@code errorId} that the log line with the full detail carries too; a database that is
 * unreachable or busy is a 503 with Retry-After, never a 500.
 */
public final class ErrorMapping {
    private static final Logger LOG = Logger.getLogger(ErrorMapping.class.getName());

    private ErrorMapping() {
    }

    public static void register(HttpRouting.Builder routing) {
        routing.error(BadRequestException.class, (req, res, e) -> {
            if (e.closesConnection()) {
                res.header(HeaderNames.CONNECTION, "close");
            }
            send(res, Status.BAD_REQUEST_400, e.code(), e.getMessage(), null);
        });
        routing.error(NotFoundException.class, (req, res, e) ->
                send(res, Status.NOT_FOUND_404, "not_found", e.getMessage(), null));
        // Helidon's own status exceptions (its 404 outside /api, a body over the size limit met while
        // reading it): the status stands, the text is ours. Unless it is only an unknown route, the
        // request may be half read: close.
        routing.error(RequestException.class, (req, res, e) -> helidon(req, res, e.status(), e));
        routing.error(HttpException.class, (req, res, e) -> helidon(req, res, e.status(), e));
        routing.error(Exception.class, ErrorMapping::failure);
    }

    private static void helidon(ServerRequest req, ServerResponse res, Status status, Exception e) {
        if (status.code() >= 500) {
            failure(req, res, e);
            return;
        }
        if (status.code() != 404 && status.code() != 405) {
            res.header(HeaderNames.CONNECTION, "close");
        }
        send(res, status, TransportErrors.code(status), TransportErrors.message(status), null);
    }

    private static void failure(ServerRequest req, ServerResponse res, Exception e) {
        Failures.Answer answer = Failures.classify(e);
        String errorId = newErrorId();
        String where = req.prologue().method().text() + " " + LogText.of(req.path().path());
        if (answer == Failures.INTERNAL) {
            LOG.log(Level.SEVERE, "errorId=" + errorId + " " + where + " failed", e);
        } else {
            LOG.warning("errorId=" + errorId + " " + where + ": " + answer.code() + ": " + e);
        }
        if (answer.retry()) {
            res.header(HeaderNames.RETRY_AFTER, Failures.RETRY_AFTER_SECONDS);
        }
        send(res, answer.status(), answer.code(), answer.message(), errorId);
    }

    static void send(ServerResponse res, Status status, String code, String message, String errorId) {
        var body = Json.object().put("error", message).put("code", code);
        if (errorId != null) {
            body.put("errorId", errorId);
        }
        Json.send(res, status, body);
    }

    /** Short enough to read out, random enough to find the one log line. */
    static String newErrorId() {
        return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE).substring(0, 12);
    }
}
