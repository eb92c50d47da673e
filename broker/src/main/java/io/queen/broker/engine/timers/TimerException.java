package io.queen.broker.engine.timers;

/**
 * A timer call refused before or by the store, in the timer surface's own terms (the reference's
 * envelope): {@code error} is the stable code clients branch on ({@code timers_bad_request},
 * {@code payload_too_large}, {@code timer_horizon_exceeded}, {@code timers_disabled}), {@code reason}
 * the finer identifier and {@code detail} a sentence in the client's terms. The HTTP layer picks the
 * status from the {@link Kind}.
 */
public final class TimerException extends RuntimeException {
    /** The client's shape (400), a size (413), a limit of the cell (403), or an operator's switch (503). */
    public enum Kind { BAD_REQUEST, TOO_LARGE, FORBIDDEN, DISABLED }

    private final Kind kind;
    private final String error;
    private final String reason;
    private final String detail;
    private final boolean mixedBatch;

    private TimerException(Kind kind, String error, String reason, String detail, boolean mixedBatch) {
        super(error + (reason == null ? "" : " (" + reason + ")") + (detail == null ? "" : ": " + detail),
                null, false, false);
        this.kind = kind;
        this.error = error;
        this.reason = reason;
        this.detail = detail;
        this.mixedBatch = mixedBatch;
    }

    /** 400 timers_bad_request with a reason such as timers_bad_body or timers_delay_required. */
    public static TimerException badRequest(String reason, String detail) {
        return new TimerException(Kind.BAD_REQUEST, "timers_bad_request", reason, detail, false);
    }

    /** 413 payload_too_large: a payload over QUEEN_TIMERS_MAX_PAYLOAD_BYTES. */
    public static TimerException tooLarge(String reason, String detail) {
        return new TimerException(Kind.TOO_LARGE, "payload_too_large", reason, detail, false);
    }

    /** 403 timer_horizon_exceeded: a delay beyond QUEEN_TIMERS_MAX_HORIZON_S. */
    public static TimerException horizon(String detail) {
        return new TimerException(Kind.FORBIDDEN, "timer_horizon_exceeded", "timers_horizon", detail, false);
    }

    /**
     * 503 timers_disabled: an operator stopped new timers. {@code mixedBatch}: the refused batch carried
     * cancels too, which the DELETE route takes whatever the switch says.
     */
    public static TimerException disabled(boolean mixedBatch) {
        return new TimerException(Kind.DISABLED, "timers_disabled", "timers_disabled",
                "new timers are switched off by an operator; retry later", mixedBatch);
    }

    public Kind kind() {
        return kind;
    }

    public String error() {
        return error;
    }

    public String reason() {
        return reason;
    }

    public String detail() {
        return detail;
    }

    public boolean mixedBatch() {
        return mixedBatch;
    }
}
