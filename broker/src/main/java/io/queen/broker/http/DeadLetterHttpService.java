package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.DeadLetterService;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.PushService;

import java.sql.SQLException;
import java.util.UUID;

/**
 * The dead-letter queue under {@code /api/v1} (broker/DESIGN.md, Acks, retries and dead letters):
 * list, purge by queue, delete by address, replay by address, and the 1.6 replay of one row by its
 * id. Every call is scoped to the request's tenant.
 */
public final class DeadLetterHttpService implements HttpService {
    private static final UUID ZERO_UUID = new UUID(0, 0);

    private final DeadLetterService deadLetters;
    private final MaintenanceSwitches switches;
    private final Tenancy tenancy;

    public DeadLetterHttpService(DeadLetterService deadLetters, MaintenanceSwitches switches, Tenancy tenancy) {
        this.deadLetters = deadLetters;
        this.switches = switches;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/dlq", this::list)
             .delete("/dlq", this::purge)
             .delete("/messages/{partitionId}/{transactionId}", this::delete)
             .post("/messages/{partitionId}/{transactionId}/retry", this::replay)
             .post("/dlq/{id}/replay", this::replayById);
    }

    private void list(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        int limit = q.integer("limit", 100);
        int offset = q.integer("offset", 0);
        Params.checkPage(limit, offset);
        ObjectNode body = Json.object();
        ArrayNode messages = body.putArray("messages");
        for (DeadLetterService.Listed l : deadLetters.list(tenancy.of(req), q.name("queue", Names.QUEUE).orElse(null),
                q.name("consumerGroup", Names.CONSUMER_GROUP).orElse(null), limit, offset)) {
            DeadLetterService.DeadLetter d = l.row();
            String failedAt = Wire.timestamp(d.failedAt());
            ObjectNode m = messages.addObject()
                    .put("id", d.id().toString())
                    .put("transactionId", d.transactionId())
                    .put("partitionId", d.partitionId().toString())
                    .put("queue", d.queue())
                    .put("partition", d.partition())
                    .put("consumerGroup", d.consumerGroup())
                    .put("errorMessage", d.error())
                    .put("retryCount", d.retryCount());
            m.set("data", Json.storedOrNull(l.data()));
            m.putNull("producerSub");
            // The original enqueue time is not kept with the snapshot: createdAt is the failure time.
            m.put("createdAt", failedAt).put("failedAt", failedAt);
            if (l.decrypted()) {
                m.put("isEncrypted", true);
            }
        }
        body.putObject("pagination").put("limit", limit).put("offset", offset);
        // total is the page length, not a count of the whole DLQ (reference).
        body.put("total", messages.size());
        Json.send(res, Status.OK_200, body);
    }

    private void purge(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        String queue = q.name("queue", Names.QUEUE).orElse(null);
        if (queue == null) {
            // Without a queue this would be a tenant-wide delete: refused.
            Json.send(res, Status.BAD_REQUEST_400, Json.object().put("success", false)
                    .put("error", "queue is required")
                    .put("message", "A bulk dead-letter purge needs an exact queue name"));
            return;
        }
        String group = q.name("consumerGroup", Names.CONSUMER_GROUP).orElse(null);
        int deleted = deadLetters.purge(tenancy.of(req), queue, group);
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("deleted", deleted)
                .put("queue", queue).put("consumerGroup", group));
    }

    private void delete(ServerRequest req, ServerResponse res) throws SQLException {
        var path = req.path().pathParameters();
        String pid = path.get("partitionId");
        String txn = Names.path(req, "transactionId", Names.TRANSACTION_ID);
        if (deadLetters.delete(tenancy.of(req), Names.uuid("partitionId", pid), txn) == 0) {
            // Live messages sit in immutable segments: only dead letters are deletable, so none is a 404.
            notFound(res, pid, txn, "No dead-letter row for this address. Live messages cannot be deleted");
            return;
        }
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("partitionId", pid)
                .put("transactionId", txn).put("message", "Message deleted successfully"));
    }

    private void replay(ServerRequest req, ServerResponse res) throws SQLException {
        var path = req.path().pathParameters();
        String pid = path.get("partitionId");
        String txn = Names.path(req, "transactionId", Names.TRANSACTION_ID);
        DeadLetterService.Replay r = deadLetters.replay(tenancy.of(req), Names.uuid("partitionId", pid), txn);
        if (r == null) {
            notFound(res, pid, txn, "No dead-letter row for this address. Only dead letters can be replayed");
            return;
        }
        ObjectNode pushed = pushResult(r.pushed());
        if (!r.accepted()) {
            ObjectNode body = Json.object().put("success", false)
                    .put("error", "Replay push was not queued; the message is still in the dead-letter queue");
            body.putArray("pushResult").add(pushed);
            Json.send(res, Status.INTERNAL_SERVER_ERROR_500, body);
            return;
        }
        ObjectNode body = Json.object().put("success", true).put("queue", r.queue()).put("partition", r.partition());
        body.set("replayedAs", pushed);
        body.put("dlqRowRemoved", r.rowRemoved());
        Json.send(res, Status.OK_200, body);
    }

    /**
     * {@code POST /api/v1/dlq/:id/replay} (1.6.0): replays the row {@code GET /dlq} listed under that
     * id, to its own queue and partition or to the body's {@code {queue, partition}} overrides (an
     * omitted half keeps the row's). Verdicts, status codes and key names are the ones the reference
     * broker answers: 200 {@code moved} or {@code duplicate} (the row kept), 404 {@code gone} (also
     * for an id that is not a UUID, so nothing is learnt about other tenants), 503 while push
     * maintenance is on (a replay is refused, not spooled), 400 for a body that is not an object or
     * names an empty destination.
     */
    private void replayById(ServerRequest req, ServerResponse res) throws SQLException {
        String id = req.path().pathParameters().get("id");
        String[] overrides;
        try {
            overrides = replayOverrides(req);
        } catch (BadRequestException e) {
            Json.send(res, Status.BAD_REQUEST_400, Json.object().put("success", false).put("error", e.getMessage())
                    .put("message", "The replay body is optional; when present it may name a queue and/or a"
                            + " partition to move the message to"));
            return;
        }
        if (switches.pushPaused()) {
            Json.send(res, Status.SERVICE_UNAVAILABLE_503, Json.object().put("success", false)
                    .put("result", "maintenance").put("error", "push maintenance is on").put("dlqRowRemoved", false)
                    .put("message", "Push maintenance is on, so nothing may be written to the log. The dead-letter"
                            + " row is untouched; replay it once maintenance is off"));
            return;
        }
        DeadLetterService.ReplayById r = Names.isUuid(id)
                ? deadLetters.replayById(tenancy.of(req), UUID.fromString(id), overrides[0], overrides[1]) : null;
        if (r == null) {
            Json.send(res, Status.NOT_FOUND_404, Json.object().put("success", false).put("result", "gone")
                    .put("dlqId", id).put("error", "Message not found")
                    .put("message", "No dead-letter row with this id; it was already replayed or purged"));
            return;
        }
        boolean duplicate = "duplicate".equals(r.pushed().status());
        if (!r.moved() && !duplicate) {
            Json.send(res, Status.INTERNAL_SERVER_ERROR_500, Json.object().put("success", false)
                    .put("error", "replay push failed: " + r.pushed().status()).put("dlqRowRemoved", false)
                    .put("message", "Nothing was replayed; the dead-letter row is untouched"));
            return;
        }
        ObjectNode replayed = pushResult(r.pushed());
        if (duplicate) {
            // Nothing was written: the pushed id is not a message id (the reference answers the all-zero uuid).
            replayed.put("message_id", ZERO_UUID.toString());
        }
        // The push path does not report the log offset it wrote at.
        replayed.putNull("offset");
        ObjectNode body = Json.object().put("success", true).put("result", r.moved() ? "moved" : "duplicate")
                .put("queue", r.queue()).put("partition", r.partition())
                .put("consumerGroup", r.consumerGroup()).put("dlqId", r.id().toString())
                .put("originalTransactionId", r.transactionId());
        body.set("replayedAs", replayed);
        body.put("dlqRowRemoved", r.rowRemoved());
        Json.send(res, Status.OK_200, body);
    }

    /** The optional body's {queue, partition}; each null when omitted. A present one must not be blank. */
    private static String[] replayOverrides(ServerRequest req) {
        JsonNode body;
        try {
            body = Json.optionalObject(req);
        } catch (BadRequestException e) {
            throw new BadRequestException("bad body: expected {} or {\"queue\":\"...\",\"partition\":\"...\"}");
        }
        if (body == null) {
            return new String[2];
        }
        if (!body.isObject()) {
            throw new BadRequestException("bad body: expected {} or {\"queue\":\"...\",\"partition\":\"...\"}");
        }
        return new String[] {override(body, "queue"), override(body, "partition")};
    }

    private static String override(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        String text = v.isTextual() ? v.textValue().trim() : "";
        if (text.isEmpty()) {
            throw new BadRequestException(field + " override must be a non-empty name");
        }
        return text;
    }

    /** One item as {@code POST /push} renders it. */
    private static ObjectNode pushResult(PushService.Result p) {
        return Json.object().put("index", p.index()).put("message_id", p.messageId().toString())
                .put("transaction_id", p.transactionId()).put("queueName", p.queueName()).put("status", p.status());
    }

    private static void notFound(ServerResponse res, String pid, String txn, String message) {
        Json.send(res, Status.NOT_FOUND_404, Json.object().put("success", false).put("partitionId", pid)
                .put("transactionId", txn).put("error", "Message not found").put("message", message));
    }
}
