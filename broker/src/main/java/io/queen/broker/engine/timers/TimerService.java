package io.queen.broker.engine.timers;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.luben.zstd.ZstdInputStream;
import io.queen.broker.config.TimerSettings;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.Database;
import io.queen.broker.store.SqlStates;
import io.queen.broker.store.TimerStore;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * The timers' request-path use cases (broker/DESIGN.md, Timers): a batch of schedule / reschedule /
 * cancel operations applied in one statement, the cancel route, and the reads. Refusals come in the
 * reference broker's order: the call's size, then each operation's shape (server-owned fields, names,
 * delay and horizon, txn, payload), then the operator's schedule switch (only for a batch that
 * schedules: a cancel is never blocked by it), then the store. The broker mints each schedule's
 * message id (UUIDv7, as a push does) and encrypts the payload here, at schedule time, when the
 * destination queue encrypts at rest, so a pending payload is never stored in clear.
 */
public final class TimerService {
    public static final ObjectMapper MAPPER = new ObjectMapper();

    /** Fields an operation may not carry: the broker owns them (an underscore-prefixed name too). */
    private static final Set<String> SERVER_OWNED = Set.of("producerSub", "producer_sub", "messageId", "message_id",
            "tenant", "tenantId", "tenant_id", "deliverAt", "deliver_at", "delaySeconds", "delay_seconds",
            "attempts", "claimToken", "claim_token", "claimedUntil", "minted");
    private static final int MAX_NAME_BYTES = 255;
    private static final int MAX_KEY_BYTES = 512;
    private static final int MAX_TXN_BYTES = 4096;
    /** The count mode's prefix, in UTF-8 bytes (the reference's bound). */
    private static final int MAX_COUNT_PREFIX_BYTES = 128;

    private final Database database;
    private final TimerSettings limits;
    private final PayloadCipher cipher;
    private final BooleanSupplier scheduleEnabled;
    private final TimerWake wake;
    private final TimerGate gate;
    private final SurfaceMetrics metrics;

    /**
     * {@code gate}: the grant, occupancy and rate rungs a schedule passes after the switch (and the
     * tenant's own horizon); {@code metrics}: where each operation's result and each refused call is
     * counted.
     */
    public TimerService(Database database, TimerSettings limits, PayloadCipher cipher, BooleanSupplier scheduleEnabled,
                        TimerWake wake, TimerGate gate, SurfaceMetrics metrics) {
        this.database = database;
        this.gate = gate;
        this.metrics = metrics;
        this.limits = limits;
        this.cipher = cipher;
        this.scheduleEnabled = scheduleEnabled;
        this.wake = wake;
    }

    /** Applies a POST /timers batch; the answers are the procedure's elements, index-aligned. */
    public List<JsonNode> apply(UUID tenant, List<JsonNode> ops) throws SQLException {
        try {
            Rider call = prepare(tenant, ops, true);
            if (call.wire().isEmpty()) {
                return List.of();
            }
            List<JsonNode> results = counted(run(tenant, call.wire()));
            committed(call);
            return results;
        } catch (TimerException e) {
            throw refused(e, ops.size());
        }
    }

    /**
     * A timer rider of {@code POST /transaction}, or a batch: its operations checked and normalised
     * to the procedure's wire before any connection is taken; {@code schedules} says whether any of
     * them schedule (a cancel alone is never stopped by the schedule switch or the quota ladder).
     */
    public record Rider(UUID tenant, List<ObjectNode> wire, int schedules) {
        public Rider {
            wire = List.copyOf(wire);
        }
    }

    /** Checks a rider as a batch is checked; a schedule while the switch is off is refused whole. */
    public Rider prepareRider(UUID tenant, List<JsonNode> ops) {
        try {
            return prepare(tenant, ops, false);
        } catch (TimerException e) {
            throw refused(e, ops.size());
        }
    }

    /**
     * Applies a rider on {@code c}, inside the caller's open transaction; answers index-aligned. Counted
     * when the store answered: a transaction rolled back later for a push or an ack is not subtracted.
     */
    public List<JsonNode> applyRider(Connection c, UUID tenant, Rider rider) throws SQLException {
        if (rider.wire().isEmpty()) {
            return List.of();
        }
        try {
            return counted(answers(applyOn(c, tenant, rider.wire()), rider.wire().size()));
        } catch (TimerException e) {
            throw refused(e, rider.wire().size());
        }
    }

    /** Each answer counted by its status. */
    private List<JsonNode> counted(List<JsonNode> answers) {
        for (JsonNode a : answers) {
            metrics.timerOp(SurfaceMetrics.TimerResult.ofStatus(a.path("status").asText(null)), 1);
        }
        return answers;
    }

    /** Counts a refused call of {@code operations} operations, by the refusal's kind; returns it to throw. */
    private TimerException refused(TimerException e, int operations) {
        metrics.timersRefused(switch (e.kind()) {
            case BAD_REQUEST -> SurfaceMetrics.TimerRefusal.SHAPE;
            case TOO_LARGE -> SurfaceMetrics.TimerRefusal.PAYLOAD_TOO_LARGE;
            case FORBIDDEN -> SurfaceMetrics.TimerRefusal.HORIZON;
            case DISABLED -> SurfaceMetrics.TimerRefusal.DISABLED;
            case QUOTA -> "feature_gated".equals(e.error()) ? SurfaceMetrics.TimerRefusal.FEATURE_GATED
                    : SurfaceMetrics.TimerRefusal.QUOTA;
            case RATE_LIMITED -> SurfaceMetrics.TimerRefusal.RATE_LIMITED;
        }, operations);
        return e;
    }

    /**
     * After the commit that carried {@code rider}: its schedules count toward the tenant's occupancy
     * until the next quota poll measures them, and wake the local sweeper at once.
     */
    public void committed(Rider rider) {
        if (rider.schedules() > 0) {
            gate.scheduled(rider.tenant(), rider.schedules());
            wake.ring();
        }
    }

    private Rider prepare(UUID tenant, List<JsonNode> ops, boolean mixedBatchHint) {
        if (ops.size() > limits.maxOpsPerCall()) {
            throw TimerException.badRequest("timers_too_many_ops",
                    ops.size() + " ops in one call, the ceiling is " + limits.maxOpsPerCall());
        }
        List<ObjectNode> wire = new ArrayList<>(ops.size());
        Set<String> seen = new HashSet<>();
        int schedules = 0;
        long horizonS = gate.horizonSeconds(tenant, limits.maxHorizonS());
        for (int i = 0; i < ops.size(); i++) {
            ObjectNode op = shape(ops.get(i), i, horizonS);
            if (!seen.add(op.get("queue").textValue() + '\u0000' + op.get("timerKey").textValue())) {
                throw TimerException.badRequest("timers_duplicate_key",
                        "op at index " + i + ": a (queue, timerKey) may appear once per call");
            }
            if (!"cancel".equals(op.get("op").textValue())) {
                schedules++;
            }
            wire.add(op);
        }
        if (schedules > 0 && !scheduleEnabled.getAsBoolean()) {
            throw TimerException.disabled(mixedBatchHint && schedules < ops.size());
        }
        if (schedules > 0) {
            gate.admit(tenant, schedules);
        }
        return new Rider(tenant, wire, schedules);
    }

    /** DELETE /timers/:queue/*key: one cancel, never refused by the schedule switch; {@code txn} is echoed. */
    public JsonNode cancel(UUID tenant, String queue, String timerKey, String txn) throws SQLException {
        ObjectNode op = MAPPER.createObjectNode().put("op", "cancel").put("queue", queue).put("timerKey", timerKey);
        if (txn != null && !txn.isEmpty()) {
            op.put("txn", txn);
        }
        try {
            return counted(run(tenant, List.of(shape(op, 0, limits.maxHorizonS())))).getFirst();
        } catch (TimerException e) {
            throw refused(e, 1);
        }
    }

    public JsonNode get(UUID tenant, String queue, String timerKey) throws SQLException {
        names(queue, timerKey, 0);
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(TimerStore.get(c, tenant, queue, timerKey));
        }
    }

    /** One keyset page of a queue's timers, no payloads; {@code limit} null is 100, clamped to 1..1000. */
    public JsonNode list(UUID tenant, String queue, String after, Integer limit) throws SQLException {
        names(queue, null, 0);
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(TimerStore.list(c, tenant, queue, after, limit));
        }
    }

    /** The count mode: how many of a queue's timers have keys starting with {@code prefix} (literal). */
    public JsonNode count(UUID tenant, String queue, String prefix) throws SQLException {
        names(queue, null, 0);
        if (prefix == null || prefix.isEmpty()) {
            throw TimerException.badRequest("timers_count_prefix_required", "mode=count requires a non-empty prefix");
        }
        if (prefix.indexOf('\u0000') >= 0) {
            throw TimerException.badRequest("timers_count_prefix_invalid", "a timer count prefix cannot contain NUL");
        }
        if (prefix.getBytes(StandardCharsets.UTF_8).length > MAX_COUNT_PREFIX_BYTES) {
            throw TimerException.badRequest("timers_count_prefix_too_long",
                    "the timer count prefix is over " + MAX_COUNT_PREFIX_BYTES + " bytes");
        }
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(TimerStore.count(c, tenant, queue, prefix));
        }
    }

    private List<JsonNode> run(UUID tenant, List<ObjectNode> wire) throws SQLException {
        String answer;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            answer = applyOn(c, tenant, wire);
        }
        return answers(answer, wire.size());
    }

    /** Seals what must be sealed, then one call of the procedure on {@code c}; a store refusal is a 400. */
    private String applyOn(Connection c, UUID tenant, List<ObjectNode> wire) throws SQLException {
        try {
            encryptAtSchedule(c, tenant, wire);
            ArrayNode array = MAPPER.createArrayNode();
            wire.forEach(array::add);
            return TimerStore.apply(c, tenant, array.toString(), null);
        } catch (SQLException e) {
            String refused = TimerStore.refusal(e);
            if (refused != null) {
                throw TimerException.badRequest(refused, "refused by the store");
            }
            throw e;
        }
    }

    private static List<JsonNode> answers(String answer, int expected) {
        JsonNode results = parse(answer);
        if (!results.isArray() || results.size() != expected) {
            throw new IllegalStateException("log_timers_apply_v1 answered " + results.size() + " results for "
                    + expected + " operations");
        }
        List<JsonNode> out = new ArrayList<>(results.size());
        results.forEach(out::add);
        return out;
    }

    /**
     * The queues among the schedules that encrypt at rest get their payloads sealed now: the envelope
     * of the plain bytes (decompressed first when the client sent zstd), stored flagged encrypted and not
     * compressed, so the fire frames it as is. A queue that does not exist yet is created at the fire with
     * default options (no encryption). A payload that fails to encrypt is kept in clear, as a push does.
     */
    private void encryptAtSchedule(Connection c, UUID tenant, List<ObjectNode> wire) throws SQLException {
        if (!cipher.isEnabled()) {
            return;
        }
        List<String> queues = wire.stream().filter(o -> !"cancel".equals(o.get("op").textValue()))
                .map(o -> o.get("queue").textValue()).distinct().toList();
        if (queues.isEmpty()) {
            return;
        }
        Set<String> encrypted = TimerStore.encryptedQueues(c, tenant, queues);
        for (ObjectNode op : wire) {
            if ("cancel".equals(op.get("op").textValue()) || !encrypted.contains(op.get("queue").textValue())) {
                continue;
            }
            if (op.path("encrypted").asBoolean(false)) {
                // The reference refuses this ambiguity rather than double-encrypt or mislabel.
                throw TimerException.badRequest("timers_encrypted_conflict", "queue `" + op.get("queue").textValue()
                        + "` encrypts at rest, so `encrypted` is set by the broker and must not be supplied");
            }
            byte[] plain = plainPayload(op, limits.maxPayloadBytes());
            try {
                byte[] sealed = cipher.encrypt(plain);
                op.put("payload", Base64.getEncoder().encodeToString(sealed));
                op.put("encrypted", true);
                op.put("payloadZstd", false);
            } catch (RuntimeException e) {
                // Stored in clear rather than failing the schedule, as the push path does.
            }
        }
    }

    /**
     * Checks one operation's shape and normalises it to the procedure's wire; the broker's id is minted
     * here. {@code horizonS}: the longest delay in force for the tenant.
     */
    private ObjectNode shape(JsonNode raw, int i, long horizonS) {
        if (raw == null || !raw.isObject()) {
            throw TimerException.badRequest("timers_bad_op", "op at index " + i + " is not an object");
        }
        var fields = raw.fieldNames();
        while (fields.hasNext()) {
            String f = fields.next();
            if (f.startsWith("_") || SERVER_OWNED.contains(f)) {
                throw TimerException.badRequest("timers_server_owned_field",
                        "op at index " + i + ": `" + f + "` is server-owned and cannot be supplied");
            }
        }
        String kind = raw.path("op").isTextual() ? raw.get("op").textValue() : "";
        if (!kind.equals("schedule") && !kind.equals("reschedule") && !kind.equals("cancel")) {
            throw TimerException.badRequest("timers_bad_op",
                    "op at index " + i + ": op must be schedule, reschedule or cancel");
        }
        String queue = text(raw, "queue");
        String key = text(raw, "timerKey");
        if (queue == null || queue.isEmpty()) {
            throw TimerException.badRequest("timers_queue_required", "op at index " + i + ": queue is required");
        }
        if (key == null || key.isEmpty()) {
            throw TimerException.badRequest("timers_timer_key_required", "op at index " + i + ": timerKey is required");
        }
        names(queue, key, i);
        ObjectNode op = MAPPER.createObjectNode().put("op", kind).put("queue", queue).put("timerKey", key);
        if (kind.equals("cancel")) {
            String txn = text(raw, "txn");
            if (txn != null) {
                op.put("txn", txn);
            }
            return op;
        }
        if (raw.has("partition") && !raw.get("partition").isNull()) {
            String partition = text(raw, "partition");
            if (partition == null || partition.isEmpty() || !storable(partition)
                    || utf8(partition) > MAX_NAME_BYTES) {
                throw TimerException.badRequest("timers_bad_partition",
                        "op at index " + i + ": partition, when present, must be a non-empty name of at most "
                                + MAX_NAME_BYTES + " bytes");
            }
            op.put("partition", partition);
        }
        JsonNode delay = raw.get("delayMs");
        if (delay == null || !delay.isNumber()) {
            throw TimerException.badRequest("timers_delay_required", "op at index " + i
                    + ": delayMs (a number of milliseconds) is required; a delay in the past is legal and fires at once");
        }
        double delayMs = delay.doubleValue();
        if (!Double.isFinite(delayMs) || delayMs > horizonS * 1000.0) {
            throw TimerException.horizon("op at index " + i + ": delayMs " + delay.asText() + " is beyond the "
                    + horizonS * 1000 + " ms horizon in force here");
        }
        op.put("delayMs", Math.max((long) Math.floor(delayMs), -limits.maxHorizonS() * 1000));
        String txn = text(raw, "txn");
        if (txn == null || txn.isEmpty()) {
            throw TimerException.badRequest("timers_txn_required", "op at index " + i + ": txn is required");
        }
        if (!storable(txn) || utf8(txn) > MAX_TXN_BYTES) {
            throw TimerException.badRequest("timers_bad_txn",
                    "op at index " + i + ": txn must be text of at most " + MAX_TXN_BYTES + " bytes");
        }
        op.put("txn", txn);
        String b64 = text(raw, "payload");
        if (b64 == null) {
            throw TimerException.badRequest("timers_payload_required", "op at index " + i + ": payload (base64) is required");
        }
        byte[] bytes;
        try {
            bytes = Base64.getMimeDecoder().decode(b64);
        } catch (IllegalArgumentException e) {
            throw TimerException.badRequest("timers_payload_not_base64", "op at index " + i + ": payload is not valid base64");
        }
        if (bytes.length > limits.maxPayloadBytes()) {
            throw TimerException.tooLarge("timers_payload_too_large", "op at index " + i + ": payload is "
                    + bytes.length + " bytes, the ceiling is " + limits.maxPayloadBytes());
        }
        boolean zstd = flag(raw, "payloadZstd", i);
        boolean encrypted = flag(raw, "encrypted", i);
        op.put("payload", Base64.getEncoder().encodeToString(bytes));
        op.put("payloadZstd", zstd);
        op.put("encrypted", encrypted);
        // The frame carries JSON text (a pop writes it into its answer as is), so the payload must be
        // JSON once decompressed; the reference stores any bytes, but our log cannot deliver them.
        byte[] plain = plainPayload(op, limits.maxPayloadBytes());
        try {
            MAPPER.readTree(plain);
        } catch (IOException e) {
            throw TimerException.badRequest("timers_payload_not_json",
                    "op at index " + i + ": payload must be base64 of JSON text (after zstd, if payloadZstd)");
        }
        op.put("minted", UuidV7.next().toString());
        return op;
    }

    /** The payload bytes an op carries, zstd undone when flagged (bounded by {@code max}). */
    private static byte[] plainPayload(ObjectNode op, int max) {
        byte[] bytes = Base64.getDecoder().decode(op.get("payload").textValue());
        if (!op.path("payloadZstd").asBoolean(false)) {
            return bytes;
        }
        try {
            return unzstd(bytes, max);
        } catch (IOException e) {
            throw TimerException.badRequest("timers_payload_not_zstd", "payloadZstd is set but the payload is not zstd");
        }
    }

    /** A zstd frame's content, refused past {@code max} bytes (a small frame may expand a long way). */
    public static byte[] unzstd(byte[] frame, int max) throws IOException {
        try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(frame))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(max, frame.length * 4 + 64));
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                if (out.size() + n > max) {
                    throw TimerException.tooLarge("timers_payload_too_large",
                            "the decompressed payload is over " + max + " bytes");
                }
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }

    private static void names(String queue, String key, int i) {
        if (queue == null || queue.isEmpty() || !storable(queue) || utf8(queue) > MAX_NAME_BYTES) {
            throw TimerException.badRequest("timers_bad_queue",
                    "op at index " + i + ": queue must be a name of at most " + MAX_NAME_BYTES + " bytes");
        }
        if (key != null && (key.isEmpty() || !storable(key) || utf8(key) > MAX_KEY_BYTES)) {
            throw TimerException.badRequest("timers_bad_timer_key",
                    "op at index " + i + ": timerKey must be text of at most " + MAX_KEY_BYTES + " bytes");
        }
    }

    /** Text PostgreSQL can store: no NUL, no unpaired surrogate. */
    private static boolean storable(String s) {
        for (int k = 0; k < s.length(); k++) {
            char ch = s.charAt(k);
            if (ch == 0) {
                return false;
            }
            if (Character.isHighSurrogate(ch)) {
                if (k + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(k + 1))) {
                    return false;
                }
                k++;
            } else if (Character.isLowSurrogate(ch)) {
                return false;
            }
        }
        return true;
    }

    private static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String text(JsonNode raw, String field) {
        JsonNode v = raw.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw TimerException.badRequest("timers_bad_op", field + " must be a string");
        }
        return v.textValue();
    }

    private static boolean flag(JsonNode raw, String field, int i) {
        JsonNode v = raw.get(field);
        if (v == null || v.isNull()) {
            return false;
        }
        if (!v.isBoolean()) {
            throw TimerException.badRequest("timers_bad_op", "op at index " + i + ": " + field + " must be a boolean");
        }
        return v.booleanValue();
    }

    private static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a timer procedure answered something that is not JSON", e);
        }
    }

    /** Whether {@code failure} is one a retry can cure (the database lost, busy, shutting down). */
    public static boolean transientFailure(Throwable failure) {
        return SqlStates.isUnavailable(failure) || SqlStates.isRetryable(failure) || SqlStates.isContention(failure);
    }
}
