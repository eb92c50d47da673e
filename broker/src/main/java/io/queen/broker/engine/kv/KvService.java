package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.queen.broker.config.KvSettings;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.engine.SurfaceMetrics.KvOpKind;
import io.queen.broker.engine.SurfaceMetrics.KvOutcome;
import io.queen.broker.engine.SurfaceMetrics.KvRefusal;
import io.queen.broker.store.Database;
import io.queen.broker.store.KvStore;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * The KV store's use cases (broker/DESIGN.md, KV store): a batch of operations applied all or nothing
 * in one statement, and the two console reads. The order of the refusals is the reference broker's:
 * the call's budgets first (measured on the request, before anything else is spent), then the
 * operator's kill switch, then the shape of each operation, then the store. A lost {@code required}
 * precondition rolls the call back and is answered as a verdict, not an error.
 */
public final class KvService {
    /** How a call ended: every operation answered, or a required precondition lost (nothing written). */
    public sealed interface Outcome {
    }

    /** The answers, index-aligned with the operations. */
    public record Answered(List<KvResult> results) implements Outcome {
        public Answered {
            results = List.copyOf(results);
        }
    }

    /**
     * The call rolled back because the operation at {@code failedIndex} had {@code required} and did not
     * apply, for {@code kvReason}; {@code version} and {@code value} are what it found. Every field is
     * null when the store's report could not be read (the verdict stands without them).
     */
    public record PreconditionLost(Integer failedIndex, String kvReason, Long version, JsonNode value)
            implements Outcome {
    }

    /** A namespace of the tenant and how many rows it holds, expired ones not yet deleted included. */
    public record Namespace(String namespace, long keys) {
    }

    /** A console page request: {@code prefix} may be empty (the whole namespace), {@code limit} null is 100. */
    public record ListRequest(String namespace, String prefix, String after, Long limit, boolean keysOnly,
                              boolean includeExpired) {
    }

    /** A console page: rows carry {@code expired}; {@code bytes} are the value bytes it spent. */
    public record Page(List<KvResult.Row> rows, boolean truncated, String nextAfter, long bytes) {
    }

    private final Database database;
    private final KvSettings limits;
    private final BooleanSupplier enabled;
    private final KvStore.Limits storeLimits;
    private final KvQuota quota;
    private final KvRates rates;
    private final SurfaceMetrics metrics;

    /**
     * {@code quota}: the poll's view the grant and occupancy rungs read (the quota refresh fills it);
     * {@code rates}: the rate rung's buckets (shared with the timers' schedules, one write budget);
     * {@code metrics}: where each operation's outcome and each ladder refusal is counted.
     */
    public KvService(Database database, KvSettings limits, BooleanSupplier enabled, KvQuota quota, KvRates rates,
                     SurfaceMetrics metrics) {
        this.database = database;
        this.metrics = metrics;
        this.limits = limits;
        this.enabled = enabled;
        this.quota = quota;
        this.rates = rates;
        this.storeLimits = new KvStore.Limits(limits.maxOpsPerCall(), limits.maxKeysPerCall(), limits.maxValueBytes(),
                limits.prefixLimit(), limits.maxReadBytes());
    }

    /**
     * Applies a call's operations, as JSON objects from the request. Refusals are {@link KvException};
     * a failure of the database is the SQLException, for the caller to answer as unavailable.
     */
    public Outcome apply(UUID tenant, List<JsonNode> ops) throws SQLException {
        if (ops.isEmpty()) {
            return new Answered(List.of());
        }
        // Budgets before the kill switch, the shape after it: the order the reference broker's source
        // has (its HTTP docs leave it open), so a malformed call is a 400 even while KV is off.
        KvOps.checkBudgets(ops, limits);
        requireEnabled();
        Ladder ladder = admit(tenant, ops);
        Rider call = encode(KvOps.parseAll(ops, limits));
        Outcome outcome;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            outcome = run(c, tenant, call, storeLimits, false);
        } catch (SQLException e) {
            counted(call, KvOutcome.ERROR);
            throw e;
        }
        counted(call, outcome);
        ladder.done(outcome);
        return outcome;
    }

    /** What a call admitted by the ladder may add, for the occupancy delta once it applied. */
    public record Ladder(UUID tenant, long rows, long bytes, KvQuota quota) {
        void done(Outcome outcome) {
            if (outcome instanceof Answered && (rows > 0 || bytes > 0)) {
                quota.wrote(tenant, rows, bytes);
            }
        }
    }

    /**
     * The rungs below the kill switch, outermost first: the tenant's grant (403 feature_gated), its
     * occupancy for a call that may grow it (403 kv_quota_exceeded; reads and deletes always pass), its
     * rate (429 rate_limited with Retry-After). A refusal spends no rate token of a rung below.
     */
    private Ladder admit(UUID tenant, List<JsonNode> ops) {
        boolean reads = false;
        boolean writes = false;
        long rows = 0;
        long bytes = 0;
        for (JsonNode op : ops) {
            String name = op == null ? "" : op.path("op").asText("");
            switch (name) {
                case "put", "putIfAbsent", "incr" -> {
                    writes = true;
                    rows++;
                    JsonNode v = op.get("value");
                    bytes += v == null ? 16 : KvJson.bytes(v).length;
                }
                case "delete" -> writes = true;
                default -> reads = true;
            }
        }
        KvQuota.Refusal refusal = quota.check(tenant, rows > 0);
        if (refusal == KvQuota.Refusal.FEATURE_GATED) {
            metrics.kvRefused(KvRefusal.FEATURE_GATED);
            throw KvException.featureGated();
        }
        if (refusal == KvQuota.Refusal.QUOTA_EXCEEDED) {
            metrics.kvRefused(KvRefusal.QUOTA);
            throw KvException.quotaExceeded();
        }
        long wait = rates.take(tenant, reads, writes, quota.limits(tenant));
        if (wait > 0) {
            metrics.kvRefused(KvRefusal.RATE_LIMITED);
            throw KvException.rateLimited(wait);
        }
        return new Ladder(tenant, rows, bytes, quota);
    }

    /** The quota view this service reads, for the refresh that fills it. */
    public KvQuota quota() {
        return quota;
    }

    /** A call's operations checked and encoded for the store: how many, their JSON, and their code paths. */
    public record Rider(int size, String wire, List<KvOpKind> kinds) {
        public Rider {
            kinds = List.copyOf(kinds);
        }
    }

    /**
     * A KV rider of {@code POST /transaction}, checked and encoded before the transaction opens: the
     * in-wire budgets (64 operations, 256 keys), the kill switch, the grant, quota and rate rungs, no
     * getPrefix (its cost is not bounded by the caller, and it would run while the transaction holds
     * the outermost lock space), and the shape of each operation.
     */
    public Rider prepareRider(UUID tenant, List<JsonNode> ops) {
        KvSettings wireLimits = limits.inWire();
        KvOps.checkBudgets(ops, wireLimits);
        requireEnabled();
        admit(tenant, ops);
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) != null && "getPrefix".equals(ops.get(i).path("op").asText(null))) {
                throw KvException.badRequest("kv_get_prefix_not_allowed_in_transaction",
                        "operation " + i + ": getPrefix is only available on POST /api/v1/kv");
            }
        }
        return encode(KvOps.parseAll(ops, wireLimits));
    }

    /**
     * Applies a rider on {@code c}, inside the caller's open transaction, as its first statement. A
     * lost {@code required} precondition is answered as the verdict; the caller must then roll back
     * (the statement raised, so the transaction is already aborted).
     */
    public Outcome applyRider(Connection c, UUID tenant, Rider rider) throws SQLException {
        KvSettings wireLimits = limits.inWire();
        Outcome outcome;
        try {
            outcome = run(c, tenant, rider, new KvStore.Limits(wireLimits.maxOpsPerCall(),
                    wireLimits.maxKeysPerCall(), wireLimits.maxValueBytes(), wireLimits.prefixLimit(),
                    wireLimits.maxReadBytes()), true);
        } catch (SQLException e) {
            counted(rider, KvOutcome.ERROR);
            throw e;
        }
        // Counted when the store answered: a transaction rolled back later for a push or an ack is not
        // subtracted (the counters follow the KV statement, not the route's commit).
        counted(rider, outcome);
        return outcome;
    }

    private static Rider encode(List<KvOp> parsed) {
        ArrayNode wire = KvJson.MAPPER.createArrayNode();
        parsed.forEach(op -> op.encode(wire.addObject()));
        return new Rider(parsed.size(), KvJson.text(wire), parsed.stream().map(op -> KvOpKind.of(op.op()))
                .filter(java.util.Objects::nonNull).toList());
    }

    /** Each answered operation applied or rejected by its own verdict; a lost required one rejects them all. */
    private void counted(Rider call, Outcome outcome) {
        if (outcome instanceof Answered a) {
            for (KvResult r : a.results()) {
                boolean applied = !(r instanceof KvResult.Write w) || w.applied();
                metrics.kvOp(KvOpKind.of(r.op()), applied ? KvOutcome.APPLIED : KvOutcome.REJECTED);
            }
        } else {
            counted(call, KvOutcome.REJECTED);
        }
    }

    private void counted(Rider call, KvOutcome outcome) {
        call.kinds().forEach(k -> metrics.kvOp(k, outcome));
    }

    private static Outcome run(Connection c, UUID tenant, Rider call, KvStore.Limits storeLimits, boolean inWire)
            throws SQLException {
        String answer;
        try {
            answer = KvStore.apply(c, tenant, call.wire(), storeLimits, inWire);
        } catch (SQLException e) {
            if (SqlStates.CHECK_VIOLATION.equals(SqlStates.of(e))) {
                return preconditionLost(KvStore.raised(e));
            }
            throw refusal(e);
        }
        JsonNode array = KvJson.parse(answer);
        if (!array.isArray() || array.size() != call.size()) {
            throw new IllegalStateException("kv_apply_v1 answered " + array.size() + " results for " + call.size()
                    + " operations");
        }
        List<KvResult> results = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            KvResult r = KvResult.of(array.get(i));
            if (r.index() != i) {
                throw new IllegalStateException("kv_apply_v1 answered index " + r.index() + " at position " + i);
            }
            results.add(r);
        }
        return new Answered(results);
    }

    /** The console's namespace selector, in byte order. */
    public List<Namespace> namespaces(UUID tenant) throws SQLException {
        requireEnabled();
        String answer;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            answer = KvStore.namespaces(c, tenant);
        }
        List<Namespace> out = new ArrayList<>();
        for (JsonNode n : KvJson.parse(answer)) {
            out.add(new Namespace(n.path("namespace").asText(), n.path("keys").asLong()));
        }
        return out;
    }

    /** One keyset page of one namespace. */
    public Page list(UUID tenant, ListRequest request) throws SQLException {
        requireEnabled();
        KvOps.namespace(request.namespace(), "list");
        String answer;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            answer = KvStore.list(c, tenant, request.namespace(), request.prefix() == null ? "" : request.prefix(),
                    request.after(), request.limit() == null ? null : (long) Math.clamp(request.limit(), 1, limits.prefixLimit()),
                    request.keysOnly(), request.includeExpired(), limits.prefixLimit(), limits.maxReadBytes());
        } catch (SQLException e) {
            throw refusal(e);
        }
        JsonNode page = KvJson.parse(answer);
        return new Page(KvResult.rows(page.path("rows")), page.path("truncated").asBoolean(),
                page.path("nextAfter").isTextual() ? page.path("nextAfter").asText() : null,
                page.path("bytes").asLong());
    }

    private void requireEnabled() {
        if (!enabled.getAsBoolean()) {
            metrics.kvRefused(KvRefusal.DISABLED);
            throw KvException.disabled();
        }
    }

    /**
     * The store's own shape refusals (22023, 22001 with one of its identifiers) become the same
     * refusals the broker would have made; anything else is the database's failure and stays one.
     */
    private static SQLException refusal(SQLException e) {
        KvStore.Raised raised = KvStore.raised(e);
        if (raised != null && raised.identifier() != null) {
            if (SqlStates.INVALID_PARAMETER_VALUE.equals(raised.state())) {
                throw KvException.badRequest(raised.identifier(), "refused by the store");
            }
            if (SqlStates.STRING_DATA_RIGHT_TRUNCATION.equals(raised.state())) {
                throw KvException.tooLarge(raised.identifier(), "refused by the store");
            }
        }
        return e;
    }

    private static PreconditionLost preconditionLost(KvStore.Raised raised) {
        JsonNode detail = null;
        if (raised != null && raised.detail() != null) {
            try {
                detail = KvJson.MAPPER.readTree(raised.detail());
            } catch (java.io.IOException e) {
                detail = null;
            }
        }
        if (detail == null || !detail.isObject()) {
            return new PreconditionLost(null, null, null, null);
        }
        JsonNode version = detail.get("version");
        return new PreconditionLost(detail.path("index").isInt() ? detail.get("index").asInt() : null,
                detail.path("reason").isTextual() ? detail.get("reason").asText() : null,
                version != null && version.canConvertToLong() ? version.asLong() : null,
                detail.get("value"));
    }
}
