package io.queen.broker.http;

import io.helidon.http.Status;
import io.queen.broker.engine.FailureKind;

/**
 * What a failure that is not the client's mistake means to the client: a status, a stable
 * {@code code}, and a message in the client's terms, one answer per engine {@link FailureKind}. The
 * database's own text, SQLSTATEs and Java exception messages never leave the broker; they go to the
 * log line that carries the same errorId.
 */
final class Failures {
    /** Seconds a client should wait before retrying a request the database could not serve. */
    static final String RETRY_AFTER_SECONDS = "1";

    /** {@code retry}: the same request can succeed later (a 503 with Retry-After). */
    record Answer(Status status, String code, String message, boolean retry) {
    }

    static final Answer UNAVAILABLE = new Answer(Status.SERVICE_UNAVAILABLE_503, "database_unavailable",
            "database unavailable", true);
    static final Answer BUSY = new Answer(Status.SERVICE_UNAVAILABLE_503, "database_busy",
            "the database could not complete the request in time; retry", true);
    static final Answer INVALID_VALUE = new Answer(Status.BAD_REQUEST_400, "invalid_value",
            "a value in the request cannot be stored (a name or text with a NUL character, or longer than its limit)",
            false);
    static final Answer CONFLICT = new Answer(Status.CONFLICT_409, "concurrent_change",
            "the request conflicts with a concurrent change (a queue or partition deleted meanwhile); retry", false);
    static final Answer INTERNAL = new Answer(Status.INTERNAL_SERVER_ERROR_500, "internal_error",
            "internal error", false);

    private Failures() {
    }

    static Answer classify(Throwable failure) {
        return switch (FailureKind.of(failure)) {
            case UNAVAILABLE -> UNAVAILABLE;
            case BUSY -> BUSY;
            case INVALID_VALUE -> INVALID_VALUE;
            case CONFLICT -> CONFLICT;
            case INTERNAL -> INTERNAL;
        };
    }
}
