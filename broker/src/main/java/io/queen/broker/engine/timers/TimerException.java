package io.queen.broker.engine.timers;

/**
 * A timer call refused before or by the store, in the timer surface's own terms (the reference's
 * envelope): {@code error} is the stable code clients branch on ({@code timers_bad_request},
 * {@code payload_too_large}, {@code timer_horizon_exceeded}, {@code timers_disabled}), {@code reason}
 * the finer identifier and {@code detail} a sentence in the client's terms. The HTTP layer picks the
 * status from the {@link Kind}.
 */
public final class TimerException extends RuntimeException {
    /**
     * The client's shape (400), a size (413), a limit of the cell on one operation (403; inside a
     * transaction a 200 verdict), the tenant's grant or occupancy (403 everywhere), its rate (429), or
     * an operator's switch (503).
     */
    public enum Kind { BAD_REQUEST, TOO_LARGE, FORBIDDEN, QUOTA, RATE_LIMITED, DISABLED }

    private final Kind kind;
    private final String error;
    private final String reason;
    private final String detail;
    private final boolean mixedBatch;
    private long retryAfterSeconds;

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

    /** 403 feature_gated: timers are not granted to this tenant (no queen.kv_quota row, or one disabled). */
    public static TimerException featureGated() {
        return new TimerException(Kind.QUOTA, "feature_gated", "timers_not_granted",
                "timers are not enabled for this tenant", false);
    }

    /** 403 timers_quota_exceeded: the tenant holds its max_timers; cancels still pass. */
    public static TimerException quotaExceeded() {
        return new TimerException(Kind.QUOTA, "timers_quota_exceeded", "timers_quota_exceeded",
                "the tenant's pending timer limit is reached; cancel timers or let them fire", false);
    }

    /** 429 rate_limited: the tenant's (or this broker's) write rate is spent for now. */
    public static TimerException rateLimited(long retryAfterSeconds) {
        TimerException e = new TimerException(Kind.RATE_LIMITED, "rate_limited", "timers_rate",
                "too many calls; retry after " + retryAfterSeconds + " s", false);
        e.retryAfterSeconds = retryAfterSeconds;
        return e;
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

    /** For a 429: whole seconds until the rate admits a call again. */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    public boolean mixedBatch() {
        return mixedBatch;
    }
}
