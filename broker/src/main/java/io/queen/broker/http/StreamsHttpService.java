package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.TransactionalPush;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.engine.streams.StreamService;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The streams routes under {@code /streams/v1} (broker/DESIGN.md, Streams), which the clients'
 * streaming SDK calls: {@code POST /queries} (register a query), {@code POST /state/get} (read its
 * state) and {@code POST /cycle} (commit a cycle). Each answers in the reference's envelope,
 * {@code success} first, refusals included (with a stable {@code code} added); a failure of the
 * database leaves through {@link ErrorMapping} like any route's (503 with Retry-After).
 */
public final class StreamsHttpService implements HttpService {
    /** The SDK's queryId, kept in a unique btree: capped well below an index entry's 2.7 KB. */
    static final Names.Rule QUERY_NAME = new Names.Rule("name", 1024, 1024);
    /** A fingerprint of the operator chain (the SDK's is 64 hex digits). */
    static final Names.Rule CONFIG_HASH = new Names.Rule("config_hash", 1024, 1024);
    /**
     * The ack statuses that complete a batch; any other is a nack, and no status at all completes.
     * The spec lists only the ack's fields; the reference's source settled the table (a plain ack's).
     */
    private static final Set<String> OK_STATUSES = Set.of("completed", "success", "acked", "ok");
    private static final DateTimeFormatter MICROS_UTC =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private final StreamService streams;
    private final Tenancy tenancy;

    public StreamsHttpService(StreamService streams, Tenancy tenancy) {
        this.streams = streams;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/queries", this::register);
        rules.post("/state/get", this::stateGet);
        rules.post("/cycle", this::cycle);
    }

    /** A refusal of the request itself, with the answer's status. */
    private static final class Refusal extends RuntimeException {
        final Status status;
        final String code;

        Refusal(Status status, String code, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
        }
    }

    private static Refusal badRequest(String message) {
        return new Refusal(Status.BAD_REQUEST_400, "bad_request", message);
    }

    private static Refusal tooLarge(String message) {
        return new Refusal(Status.REQUEST_ENTITY_TOO_LARGE_413, "payload_too_large", message);
    }

    /** The body as an object; anything else (or unreadable JSON) is a 400 with {@code notAnObject}. */
    private static JsonNode object(ServerRequest req, String notAnObject) {
        JsonNode body;
        try {
            body = Json.body(req);
        } catch (MalformedRequestException e) {
            throw e; // The framing broke: the house answer, which closes the connection.
        } catch (BadRequestException e) {
            throw badRequest(Json.asBadBody(e).getMessage());
        }
        if (body == null || !body.isObject()) {
            throw badRequest(notAnObject);
        }
        return body;
    }

    /** A non-empty string member, else null. */
    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? v.asText() : null;
    }

    private static String checked(Names.Rule rule, String value, String where) {
        try {
            return Names.check(rule, value, where);
        } catch (BadRequestException e) {
            throw badRequest(e.getMessage());
        }
    }

    private static UUID uuid(String field, String text) {
        try {
            return Names.uuid(field, text);
        } catch (BadRequestException e) {
            throw badRequest(e.getMessage());
        }
    }

    // ---------------------------------------------------------------- POST /queries

    private void register(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        StreamService.Registration r;
        try {
            r = registration(object(req, "bad body: a JSON object is required"));
        } catch (Refusal e) {
            Json.send(res, e.status, Json.object().put("success", false).put("error", e.getMessage()).put("code", e.code));
            return;
        }
        StreamService.RegisterOutcome outcome = streams.register(tenant, r);
        switch (outcome) {
            case StreamService.Registered ok -> Json.send(res, Status.OK_200, Json.object()
                    .put("success", true)
                    .put("query_id", ok.queryId().toString())
                    .put("name", ok.name())
                    .put("config_hash", ok.configHash())
                    .put("fresh", ok.fresh())
                    .put("reset", ok.reset()));
            // The SDK reads a 409 as "pass reset:true"; the reference's only 409.
            case StreamService.HashMismatch m -> Json.send(res, Status.CONFLICT_409, Json.object()
                    .put("success", false)
                    .put("query_id", m.queryId().toString())
                    .put("name", m.name())
                    .put("error", m.error())
                    .put("code", "config_hash_mismatch"));
            case StreamService.Denied d -> Json.send(res, Status.FORBIDDEN_403, Json.object()
                    .put("success", false)
                    .put("denied", true)
                    .put("error", d.error())
                    .put("code", "streams_not_granted"));
        }
    }

    /** The reference's required-field order and sentences: name, source_queue, config_hash. */
    static StreamService.Registration registration(JsonNode body) {
        String name = text(body, "name");
        if (name == null) {
            throw badRequest("name is required");
        }
        String source = text(body, "source_queue");
        if (source == null) {
            throw badRequest("source_queue is required");
        }
        String hash = text(body, "config_hash");
        if (hash == null) {
            throw badRequest("config_hash is required");
        }
        String sink = text(body, "sink_queue");
        JsonNode reset = body.get("reset");
        if (reset != null && !reset.isNull() && !reset.isBoolean()) {
            throw badRequest("reset must be a boolean");
        }
        return new StreamService.Registration(checked(QUERY_NAME, name, "name"),
                checked(Names.QUEUE, source, "source_queue"), checked(Names.QUEUE, sink, "sink_queue"),
                checked(CONFIG_HASH, hash, "config_hash"), reset != null && reset.asBoolean(false));
    }

    // ---------------------------------------------------------------- POST /state/get

    private void stateGet(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        StreamService.StateQuery q;
        try {
            q = stateQuery(object(req, "request body must be a JSON object"));
        } catch (Refusal e) {
            sendStateRefusal(res, e.status, e.getMessage(), e.code);
            return;
        }
        switch (streams.readState(tenant, q)) {
            case StreamService.StateRows rows -> Json.sendBytes(res, Status.OK_200,
                    ("{\"success\":true,\"rows\":" + rows.rowsJson() + "}").getBytes(StandardCharsets.UTF_8));
            // The reference's ownership gate answers a foreign partition as not found, in these words.
            case StreamService.NotFound nf -> sendStateRefusal(res, Status.NOT_FOUND_404,
                    nf.what() == StreamService.Refusal.PARTITION_NOT_FOUND ? "not found" : "query not found",
                    nf.what() == StreamService.Refusal.PARTITION_NOT_FOUND ? "partition_not_found" : "query_not_found");
        }
    }

    private static void sendStateRefusal(ServerResponse res, Status status, String error, String code) {
        ObjectNode out = Json.object().put("success", false).put("error", error).put("code", code);
        out.putArray("rows");
        Json.send(res, status, out);
    }

    static StreamService.StateQuery stateQuery(JsonNode body) {
        String query = text(body, "query_id");
        String partition = text(body, "partition_id");
        if (query == null || partition == null) {
            throw badRequest("query_id and partition_id are required");
        }
        // As the reference: keys that are not an array mean every key.
        List<String> keys = new ArrayList<>();
        JsonNode k = body.get("keys");
        if (k != null && k.isArray()) {
            for (int i = 0; i < k.size(); i++) {
                JsonNode key = k.get(i);
                if (key.isNull()) {
                    continue;
                }
                if (!key.isValueNode()) {
                    throw badRequest("keys[" + i + "] must be a string");
                }
                keys.add(key.asText());
            }
        }
        JsonNode ripe = body.get("ripe_at_or_before");
        return new StreamService.StateQuery(uuid("query_id", query), uuid("partition_id", partition), keys,
                text(body, "key_prefix"), ripe != null && ripe.isNumber() ? ripe.decimalValue() : null);
    }

    // ---------------------------------------------------------------- POST /cycle

    private void cycle(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        JsonNode body = null;
        StreamService.Cycle c;
        try {
            body = object(req, "bad body: a JSON object is required");
            c = cycleRequest(body);
        } catch (Refusal e) {
            sendCycleRefusal(res, e.status, body, null, e.getMessage(), e.code);
            return;
        }
        switch (streams.cycle(tenant, c)) {
            case StreamService.Committed done -> Json.send(res, Status.OK_200, committed(c, done));
            case StreamService.Refused r -> refused(res, body, r);
        }
    }

    private static ObjectNode committed(StreamService.Cycle c, StreamService.Committed done) {
        ObjectNode out = Json.object()
                .put("success", true)
                .put("query_id", c.queryId().toString())
                .put("partition_id", c.partitionId().toString())
                .put("queueName", done.queueName())
                .put("state_ops_applied", done.stateOpsApplied());
        ArrayNode pushes = out.putArray("push_results");
        for (TransactionalPush.GroupResult g : done.pushes()) {
            ObjectNode p = pushes.addObject()
                    .put("queue", g.queue())
                    .put("partition", g.partition())
                    .put("status", g.queued() > 0 ? "queued" : "duplicate");
            if (g.baseOffset() == null) {
                p.putNull("baseOffset");
            } else {
                p.put("baseOffset", g.baseOffset());
                p.put("createdAt", MICROS_UTC.format(g.createdAt()));
            }
            p.put("count", g.queued()).put("duplicates", g.duplicates());
        }
        if (done.ack() == null) {
            out.putNull("ack_result");
        } else {
            // A cycle's ack never dead-letters: streams retry on their own (the reference's dlq is always false).
            out.putObject("ack_result")
                    .put("success", true)
                    .put("count", done.ack().count())
                    .put("lease_released", done.ack().leaseReleased())
                    .put("dlq", false);
        }
        return out;
    }

    /**
     * The reference answers a refused cycle 200 with success:false; ours are 4xx with the same
     * fields, so a client that checks only the status cannot take a refusal for a commit. The SDK
     * fails the cycle either way (on success:false, and on any non-2xx) and retries only a 5xx.
     */
    private static void refused(ServerResponse res, JsonNode body, StreamService.Refused r) {
        switch (r.reason()) {
            case PARTITION_NOT_FOUND -> sendCycleRefusal(res, Status.NOT_FOUND_404, body, r.queueName(),
                    "partition not found", "partition_not_found");
            case QUERY_NOT_FOUND -> sendCycleRefusal(res, Status.NOT_FOUND_404, body, r.queueName(),
                    "query not found", "query_not_found");
            case LEASE_INVALID -> sendCycleRefusal(res, Status.CONFLICT_409, body, r.queueName(),
                    "invalid or expired lease", "lease_invalid");
            case NO_LEASED_BATCH -> sendCycleRefusal(res, Status.CONFLICT_409, body, r.queueName(),
                    "no leased batch", "no_leased_batch");
            case BAD_STATE_OP -> sendCycleRefusal(res, Status.BAD_REQUEST_400, body, r.queueName(),
                    r.detail() == null ? "malformed state operation" : r.detail(), "bad_request");
            case STATE_KEY_TOO_LARGE -> sendCycleRefusal(res, Status.REQUEST_ENTITY_TOO_LARGE_413, body,
                    r.queueName(), "a state key is longer than " + StreamService.MAX_STATE_KEY_BYTES + " bytes",
                    "payload_too_large");
        }
    }

    /** The reference's failed-cycle shape: nothing applied, so the counters are zero. */
    private static void sendCycleRefusal(ServerResponse res, Status status, JsonNode body, String queueName,
                                         String error, String code) {
        String query = body == null || !body.isObject() ? null : text(body, "query_id");
        String partition = body == null || !body.isObject() ? null : text(body, "partition_id");
        ObjectNode out = Json.object()
                .put("success", false)
                .put("query_id", query == null ? "" : query)
                .put("partition_id", partition == null ? "" : partition)
                .put("queueName", queueName)
                .put("state_ops_applied", 0);
        out.putArray("push_results");
        out.putNull("ack_result");
        out.put("error", error).put("code", code);
        Json.send(res, status, out);
    }

    static StreamService.Cycle cycleRequest(JsonNode body) {
        String query = text(body, "query_id");
        if (query == null) {
            throw badRequest("query_id is required");
        }
        String partition = text(body, "partition_id");
        if (partition == null) {
            throw badRequest("partition_id is required");
        }
        UUID queryId = uuid("query_id", query);
        UUID partitionId = uuid("partition_id", partition);
        String group = text(body, "consumer_group");
        group = group == null ? Tenants.QUEUE_MODE : checked(Names.CONSUMER_GROUP, group, "consumer_group");
        // As the reference: anything but false keeps the default, release.
        JsonNode release = body.get("release_lease");
        boolean releaseLease = release == null || !release.isBoolean() || release.asBoolean();
        return new StreamService.Cycle(queryId, partitionId, group, stateOps(body.get("state_ops")),
                pushItems(body.get("push_items")), ack(body.get("ack")), releaseLease);
    }

    private static List<StreamService.StateOp> stateOps(JsonNode ops) {
        List<StreamService.StateOp> out = new ArrayList<>();
        if (ops == null || ops.isNull()) {
            return out;
        }
        if (!ops.isArray()) {
            throw badRequest("state_ops must be an array");
        }
        for (int i = 0; i < ops.size(); i++) {
            JsonNode op = ops.get(i);
            if (!op.isObject()) {
                throw badRequest("state_ops[" + i + "] must be an object");
            }
            JsonNode type = op.get("type");
            String t = type != null && type.isTextual() ? type.asText() : null;
            StreamService.StateOpType kind = "upsert".equals(t) ? StreamService.StateOpType.UPSERT
                    : "delete".equals(t) ? StreamService.StateOpType.DELETE : null;
            if (kind == null) {
                // The reference's sentence.
                throw badRequest("Unknown state_op type: " + (t == null ? "null" : t));
            }
            JsonNode key = op.get("key");
            if (key == null || !key.isTextual()) {
                throw badRequest("state_ops[" + i + "].key is required (a string)");
            }
            if (key.asText().length() > StreamService.MAX_STATE_KEY_BYTES / 3
                    && key.asText().getBytes(StandardCharsets.UTF_8).length > StreamService.MAX_STATE_KEY_BYTES) {
                throw tooLarge("state_ops[" + i + "].key is longer than " + StreamService.MAX_STATE_KEY_BYTES
                        + " bytes");
            }
            String value = null;
            if (kind == StreamService.StateOpType.UPSERT && op.has("value")) {
                byte[] bytes = Json.bytes(op.get("value"));
                if (bytes.length > StreamService.MAX_STATE_VALUE_BYTES) {
                    throw tooLarge("state_ops[" + i + "].value is larger than " + StreamService.MAX_STATE_VALUE_BYTES
                            + " bytes of JSON");
                }
                value = new String(bytes, StandardCharsets.UTF_8);
            }
            out.add(new StreamService.StateOp(kind, key.asText(), value));
        }
        return out;
    }

    /** Sink items, as the reference reads them: no queue skips the item, no partition is Default. */
    private static List<PushService.Item> pushItems(JsonNode items) {
        List<PushService.Item> out = new ArrayList<>();
        if (items == null || items.isNull()) {
            return out;
        }
        if (!items.isArray()) {
            throw badRequest("push_items must be an array");
        }
        for (int i = 0; i < items.size(); i++) {
            JsonNode item = items.get(i);
            String where = "push_items[" + i + "].";
            if (!item.isObject()) {
                throw badRequest("push_items[" + i + "] must be an object");
            }
            String queue = text(item, "queue");
            if (queue == null) {
                continue;
            }
            String partition = text(item, "partition");
            JsonNode payload = item.has("payload") ? item.get("payload") : item.has("data") ? item.get("data")
                    : Json.object();
            byte[] bytes = Json.bytes(payload);
            String unstorable = PayloadText.problem(bytes);
            if (unstorable != null) {
                throw badRequest("invalid " + where + "payload: " + unstorable);
            }
            // The reference mints a message id (and so the default transactionId) when messageId is
            // absent or not a UUID, rather than refusing the item: its source settled it.
            String messageId = text(item, "messageId");
            UUID id = messageId != null && Names.isUuid(messageId) ? UUID.fromString(messageId) : UuidV7.next();
            out.add(new PushService.Item(checked(Names.QUEUE, queue, where + "queue"),
                    checked(Names.PARTITION, partition == null ? Tenants.DEFAULT_PARTITION : partition,
                            where + "partition"),
                    bytes, checked(Names.TRANSACTION_ID, text(item, "transactionId"), where + "transactionId"),
                    null, id, null)); // No producer subject: a cycle's pushes are the query's, not a caller's.
        }
        return out;
    }

    private static StreamService.Ack ack(JsonNode ack) {
        if (ack == null || ack.isNull()) {
            return null;
        }
        if (!ack.isObject()) {
            throw badRequest("ack must be an object or null");
        }
        String lease = text(ack, "leaseId");
        JsonNode status = ack.get("status");
        boolean ok = status == null || !status.isTextual() || OK_STATUSES.contains(status.asText());
        JsonNode count = ack.get("count");
        return new StreamService.Ack(checked(Names.LEASE_ID, lease == null ? "" : lease, "ack.leaseId"), ok,
                count != null && count.isIntegralNumber() && count.canConvertToLong() ? count.asLong() : 0);
    }
}
