package io.queen.broker.engine.kv;

/**
 * A KV call refused before or by the store, in the KV surface's own terms: {@code error} is the stable
 * code clients branch on ({@code kv_bad_request}, {@code payload_too_large}, {@code kv_disabled}),
 * {@code reason} the finer identifier ({@code kv_prefix_required}, ...) and {@code detail} a sentence
 * in the client's terms. The HTTP layer picks the status from the {@link Kind}.
 */
public final class KvException extends RuntimeException {
    /**
     * What kind of refusal: the client's shape (400), a size (413), an operator's switch (503), the
     * tenant's grant or quota (403), or its rate (429, with {@link #retryAfterSeconds}).
     */
    public enum Kind { BAD_REQUEST, TOO_LARGE, DISABLED, FORBIDDEN, RATE_LIMITED }

    private final Kind kind;
    private long retryAfterSeconds;
    private final String error;
    private final String reason;
    private final String detail;

    public KvException(Kind kind, String error, String reason, String detail) {
        super(error + (reason == null ? "" : " (" + reason + ")") + (detail == null ? "" : ": " + detail),
                null, false, false);
        this.kind = kind;
        this.error = error;
        this.reason = reason;
        this.detail = detail;
    }

    /** 400 kv_bad_request with a reason such as kv_bad_body or kv_expiry_not_specified. */
    public static KvException badRequest(String reason, String detail) {
        return new KvException(Kind.BAD_REQUEST, "kv_bad_request", reason, detail);
    }

    /** 413 payload_too_large: a value or key over its ceiling. */
    public static KvException tooLarge(String reason, String detail) {
        return new KvException(Kind.TOO_LARGE, "payload_too_large", reason, detail);
    }

    /** 503 kv_disabled: an operator switched the KV store off (POST /api/v1/system/kv-timers). */
    public static KvException disabled() {
        return new KvException(Kind.DISABLED, "kv_disabled", "kv_disabled",
                "the KV store is switched off by an operator; retry later");
    }

    /** 403 feature_gated: KV is not granted to this tenant (no queen.kv_quota row, or one disabled). */
    public static KvException featureGated() {
        return new KvException(Kind.FORBIDDEN, "feature_gated", "kv_not_granted",
                "the KV store is not enabled for this tenant");
    }

    /** 403 kv_quota_exceeded: the tenant holds its row or byte limit; reads and deletes still pass. */
    public static KvException quotaExceeded() {
        return new KvException(Kind.FORBIDDEN, "kv_quota_exceeded", "kv_quota_exceeded",
                "the tenant's KV occupancy limit is reached; delete keys or let them expire");
    }

    /** 429 rate_limited: the tenant's (or this broker's) KV call rate is spent for now. */
    public static KvException rateLimited(long retryAfterSeconds) {
        KvException e = new KvException(Kind.RATE_LIMITED, "rate_limited", "kv_rate",
                "too many KV calls; retry after " + retryAfterSeconds + " s");
        e.retryAfterSeconds = retryAfterSeconds;
        return e;
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
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
}
