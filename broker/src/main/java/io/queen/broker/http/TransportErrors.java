package io.queen.broker.http;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectHandlers;

import java.nio.charset.StandardCharsets;
import java.util.logging.Logger;

/**
 * Answers for requests Helidon refuses before any route sees them (a request line with tabs, a
 * header without a colon, a path over the prologue limit, a declared body over QUEEN_MAX_BODY_BYTES):
 * the same JSON error shape as every other answer, in our words, and the connection closed since
 * the rest of the stream cannot be trusted. A refused request is a client's mistake, so a status
 * Helidon would give as 5xx for it (505 for an unknown HTTP version) is answered 400.
 */
public final class TransportErrors {
    private static final Logger LOG = Logger.getLogger(TransportErrors.class.getName());

    private TransportErrors() {
    }

    public static DirectHandlers handlers(long maxBodyBytes) {
        DirectHandler handler = (request, type, status, headers, message) -> answer(status, headers, maxBodyBytes,
                request.method() + " " + LogText.of(request.path()) + ": " + LogText.of(message));
        DirectHandlers.Builder b = DirectHandlers.builder();
        for (DirectHandler.EventType type : DirectHandler.EventType.values()) {
            b.addHandler(type, handler);
        }
        return b.build();
    }

    private static DirectHandler.TransportResponse answer(Status status, ServerResponseHeaders headers,
                                                          long maxBodyBytes, String detail) {
        Status answered = status.code() >= 500 && status != Status.INTERNAL_SERVER_ERROR_500
                ? Status.BAD_REQUEST_400 : status;
        String message = answered == Status.REQUEST_ENTITY_TOO_LARGE_413
                ? "request body larger than " + maxBodyBytes + " bytes (QUEEN_MAX_BODY_BYTES)"
                : message(answered);
        String code = answered == Status.INTERNAL_SERVER_ERROR_500 ? "internal_error" : code(answered);
        LOG.fine(() -> "refused before routing with " + answered.code() + ": " + detail);
        byte[] body = ("{\"error\":\"" + message + "\",\"code\":\"" + code + "\"}").getBytes(StandardCharsets.UTF_8);
        headers.set(HeaderValues.CONTENT_TYPE_JSON);
        headers.set(HeaderNames.CONNECTION, "close");
        return DirectHandler.TransportResponse.builder()
                .status(answered)
                .headers(headers)
                .keepAlive(false)
                .entity(body)
                .build();
    }

    static String code(Status status) {
        return switch (status.code()) {
            case 404 -> "no_such_route";
            case 405 -> "method_not_allowed";
            case 413 -> "body_too_large";
            case 414 -> "uri_too_long";
            case 431 -> "headers_too_large";
            default -> status.code() >= 500 ? "internal_error" : "malformed_request";
        };
    }

    static String message(Status status) {
        return switch (status.code()) {
            case 404 -> "Not Found";
            case 405 -> "method not allowed on this route";
            case 413 -> "request body too large (QUEEN_MAX_BODY_BYTES)";
            case 414 -> "request line too long";
            case 431 -> "request headers too large";
            default -> status.code() >= 500 ? "internal error" : "malformed HTTP request";
        };
    }
}
