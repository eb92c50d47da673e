package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.AckDecision;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.PopService;
import io.queen.broker.engine.PushIntake;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.PushSpool;
import io.queen.broker.engine.Tenants;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.UUID;

/**
 * The message path under {@code /api/v1}: push, the three pop routes, ack, batch ack and lease
 * extension. Field names, defaults and status codes are the reference broker's (broker/DESIGN.md,
 * HTTP contract).
 */
public final class DataHttpService implements HttpService {
    private final PopService pop;
    private final AckService ack;
    private final Tenancy tenancy;
    private final PopDefaults defaults;
    private final BrokerMetrics metrics;
    private final MaintenanceSwitches switches;
    private final PushIntake intake;
    /** What a push refused during an outage is told to wait: about the spool drain's longest backoff. */
    static final String RETRY_AFTER_SECONDS = "5";

    /** Broker-wide pop defaults from the environment (DEFAULT_TIMEOUT, DEFAULT_SUBSCRIPTION_MODE). */
    public record PopDefaults(long timeoutMs, String subscriptionMode) {
    }

    public DataHttpService(PushService push, PopService pop, AckService ack, Tenancy tenancy, PopDefaults defaults,
                           BrokerMetrics metrics, MaintenanceSwitches switches, PushSpool spool) {
        this.pop = pop;
        this.ack = ack;
        this.tenancy = tenancy;
        this.defaults = defaults;
        this.metrics = metrics;
        this.switches = switches;
        this.intake = new PushIntake(push, spool, switches::pushPaused);
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/push", this::push)
             .get("/pop/queue/{queue}/partition/{partition}", this::popPartition)
             .get("/pop/queue/{queue}", this::popQueue)
             .get("/pop", this::popDiscover)
             .post("/ack", this::ackSingle)
             .post("/ack/batch", this::ackBatch)
             .post("/lease/{leaseId}/extend", this::extendLease);
    }

    // ---------------------------------------------------------------- push

    private void push(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        List<PushService.Item> parsed = PushBody.parse(Json.rawBody(req));
        // PostgreSQL, or the on-disk spool under push maintenance or during a database outage.
        PushIntake.Outcome outcome = intake.push(tenant, parsed);
        if (outcome.route() == PushIntake.Route.OUTAGE_SPOOL && !outcome.stored()) {
            // Neither the database nor the spool took the items: nothing was stored, the client must retry.
            res.header(HeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
            ErrorMapping.send(res, Status.SERVICE_UNAVAILABLE_503, "spool_unavailable",
                    "database unavailable and the push spool cannot be written", null);
            return;
        }
        metrics.pushed(outcome.results().size());
        Json.sendBytes(res, outcome.stored() ? Status.CREATED_201 : Status.INTERNAL_SERVER_ERROR_500,
                renderPushResults(outcome.results()));
    }

    /** The per-item results, written straight to bytes (no tree: a 100-item push is answered often). */
    static byte[] renderPushResults(List<PushService.Result> results) {
        JsonBytes out = new JsonBytes(64 + results.size() * 160);
        out.raw("[");
        for (int i = 0; i < results.size(); i++) {
            PushService.Result r = results.get(i);
            out.raw(i == 0 ? "{\"index\":" : ",{\"index\":").number(r.index())
                    .raw(",\"message_id\":").uuid(r.messageId())
                    .raw(",\"transaction_id\":").string(r.transactionId())
                    .raw(",\"queueName\":").string(r.queueName())
                    .raw(",\"status\":").string(r.status())
                    .raw("}");
        }
        return out.raw("]").toByteArray();
    }

    /**
     * One push item from its fields as sent (null when absent), validated.
     *
     * @param payload the item's payload exactly as sent, or null when the item has none
     */
    static PushService.Item pushItem(JsonNode queueNode, JsonNode partitionNode, JsonNode t, byte[] payload,
                                     int index) {
        if (queueNode == null || !queueNode.isTextual() || queueNode.asText().isEmpty()) {
            throw new BadRequestException("bad body: items[" + index + "].queue is required (a non-empty string)");
        }
        String queue = bodyName(Names.QUEUE, queueNode.asText(), "items[" + index + "].queue");
        String partition = Tenants.DEFAULT_PARTITION;
        if (partitionNode != null && !partitionNode.isNull()) {
            if (!partitionNode.isTextual() || partitionNode.asText().isEmpty()) {
                throw new BadRequestException("bad body: items[" + index + "].partition must be a non-empty string");
            }
            partition = bodyName(Names.PARTITION, partitionNode.asText(), "items[" + index + "].partition");
        }
        if (payload == null) {
            throw new BadRequestException("bad body: items[" + index + "].payload is required");
        }
        String unstorable = PayloadText.problem(payload);
        if (unstorable != null) {
            throw new BadRequestException("bad body: items[" + index + "].payload " + unstorable);
        }
        String txn = null;
        if (t != null && !t.isNull()) {
            if (!t.isTextual() || t.asText().isEmpty()) {
                throw new BadRequestException("bad body: items[" + index + "].transactionId must be a non-empty string");
            }
            txn = bodyName(Names.TRANSACTION_ID, t.asText(), "items[" + index + "].transactionId");
        }
        return new PushService.Item(queue, partition, payload, txn, null);
    }

    // ---------------------------------------------------------------- pop

    static final String CONFLATION_NEEDS_GROUP = "conflation requires consumerGroup: queue mode is a shared cursor"
            + " with no group identity to hang a delivery policy on";
    static final String CONFLATION_WITH_AUTO_ACK = "conflation cannot be combined with autoAck: auto-ack commits at"
            + " delivery with no lease, so a failed handler loses the tail and the at-least-once guarantee"
            + " conflation exists to provide degrades to at-most-once";

    /**
     * Pop maintenance: a bare 204 before anything touches the database, except that a pop asking
     * for conflation is answered 200 with the echo its client checks for, as the reference broker
     * answers it.
     */
    private boolean popPaused(ServerResponse res, PopService.Request r) {
        if (!switches.popPaused()) {
            return false;
        }
        if (Boolean.TRUE.equals(r.conflation())) {
            Json.sendBytes(res, Status.OK_200,
                    "{\"messages\":[],\"paused\":true,\"conflation\":true}".getBytes(StandardCharsets.UTF_8));
        } else {
            res.status(Status.NO_CONTENT_204).send();
        }
        return true;
    }

    private void popQueue(ServerRequest req, ServerResponse res) throws Exception {
        serve(res, popRequest(req, Names.path(req, "queue", Names.QUEUE), null));
    }

    private void popPartition(ServerRequest req, ServerResponse res) throws Exception {
        serve(res, popRequest(req, Names.path(req, "queue", Names.QUEUE),
                Names.path(req, "partition", Names.PARTITION)));
    }

    private void popDiscover(ServerRequest req, ServerResponse res) throws Exception {
        Params q = new Params(req.query());
        if (q.string("namespace").isEmpty() && q.string("task").isEmpty()) {
            popRefused(res, "namespace or task is required");
            return;
        }
        serve(res, popRequest(req, null, null));
    }

    private void serve(ServerResponse res, PopService.Request r) throws Exception {
        // The two combinations conflation refuses (broker/DESIGN.md, Pop path): both are consumer
        // bugs that no retry fixes.
        if (Boolean.TRUE.equals(r.conflation()) && Tenants.QUEUE_MODE.equals(r.consumerGroup())) {
            popRefused(res, CONFLATION_NEEDS_GROUP);
        } else if (Boolean.TRUE.equals(r.conflation()) && r.autoAck()) {
            popRefused(res, CONFLATION_WITH_AUTO_ACK);
        } else if (!popPaused(res, r)) {
            respond(res, pop.pop(r));
        }
    }

    private static void popRefused(ServerResponse res, String error) {
        ObjectNode body = Json.object().put("success", false).put("error", error);
        body.putArray("messages");
        Json.send(res, Status.BAD_REQUEST_400, body);
    }

    PopService.Request popRequest(ServerRequest req, String queue, String partition) {
        Params q = new Params(req.query());
        int batch = q.integer("batch", 200);
        if (batch < 0) {
            throw new BadRequestException("invalid query parameter batch=" + batch + ": must not be negative");
        }
        String group = q.name("consumerGroup", Names.CONSUMER_GROUP).orElse(Tenants.QUEUE_MODE);
        String mode = q.name("subscriptionMode", Names.SUBSCRIPTION_MODE).orElse(defaults.subscriptionMode());
        Instant from = null;
        String fromRaw = q.name("subscriptionFrom", Names.FILTER).orElse("");
        if (fromRaw.equals("now")) {
            mode = "new";
        } else if (!fromRaw.isEmpty()) {
            try {
                from = OffsetDateTime.parse(fromRaw).toInstant();
            } catch (DateTimeParseException e) {
                try {
                    from = Instant.parse(fromRaw);
                } catch (DateTimeParseException ignored) {
                    // The reference ignores an unparseable subscriptionFrom.
                }
            }
        }
        if (Tenants.QUEUE_MODE.equals(group)) {
            mode = "all";
        }
        int lease = Math.max(q.integer("leaseSeconds", 0), 0);
        Integer partitions = q.string("partitions").isPresent() ? q.integer("partitions", 1) : null;
        Boolean conflation = q.string("conflation").isPresent() ? q.bool("conflation", false) : null;
        return new PopService.Request(
                new PopService.Source(tenancy.of(req), queue, partition,
                        q.name("namespace", Names.NAMESPACE).orElse(null), q.name("task", Names.TASK).orElse(null)),
                new PopService.Sizing(batch, q.string("batch").isPresent(), partitions, q.bool("autopilot", false)),
                new PopService.Delivery(q.bool("autoAck", false), lease, q.bool("wait", false),
                        q.integer("timeout", (int) defaults.timeoutMs())),
                new PopService.Subscription(group, mode, from, conflation));
    }

    private void respond(ServerResponse res, PopService.Result r) {
        metrics.popped(r.isEmpty() ? 0 : r.messages().size());
        // An empty conflating (or conflicting) answer is a 200 carrying the echo: a client that asked
        // for conflation and finds no echo takes the broker for one that does not conflate.
        if (r.isEmpty() && !r.conflation() && !r.conflationConflict()) {
            res.status(Status.NO_CONTENT_204).send();
            return;
        }
        Json.sendBytes(res, Status.OK_200, render(r));
    }

    /**
     * The pop body with each payload spliced verbatim (no re-parse of message data). An empty
     * answer (conflating) names no partition and no lease, as none was claimed.
     */
    static byte[] render(PopService.Result r) {
        JsonBytes out = new JsonBytes(renderedSize(r));
        out.raw("{\"success\":true,\"queue\":").string(r.queue());
        if (r.isEmpty()) {
            out.raw(",\"partition\":\"\",\"partitionId\":\"\",\"leaseId\":\"\"");
        } else {
            out.raw(",\"partition\":").string(r.partition())
                    .raw(",\"partitionId\":").uuid(r.partitionId())
                    .raw(",\"leaseId\":").string(r.leaseId());
        }
        out.raw(",\"consumerGroup\":").string(r.consumerGroup()).raw(",\"messages\":[");
        // Messages of one segment share their creation time: format it once per run of equal instants.
        Instant lastCreated = null;
        String lastCreatedText = null;
        for (int i = 0; i < r.messages().size(); i++) {
            PopService.Message m = r.messages().get(i);
            if (lastCreated == null || !lastCreated.equals(m.createdAt())) {
                lastCreated = m.createdAt();
                lastCreatedText = Wire.timestamp(lastCreated);
            }
            out.raw(i == 0 ? "{\"id\":" : ",{\"id\":").uuid(m.id())
                    .raw(",\"transactionId\":").string(m.transactionId())
                    .raw(",\"traceId\":").uuid(m.traceId())
                    .raw(",\"data\":");
            if (m.data().length == 0) {
                out.raw("null");
            } else {
                out.raw(m.data()); // stored as the JSON the producer sent: its bytes as they are
            }
            out.raw(",\"producerSub\":").string(m.producerSub())
                    .raw(",\"createdAt\":").string(lastCreatedText)
                    .raw(",\"partitionId\":").uuid(m.partitionId())
                    .raw(",\"partition\":").string(m.partition())
                    .raw(",\"leaseId\":").string(r.leaseId())
                    .raw(",\"consumerGroup\":").string(r.consumerGroup())
                    .raw(",\"deliveryAttempt\":").number(m.deliveryAttempt())
                    .raw("}");
        }
        out.raw("],\"partitionsClaimed\":").number(r.partitionsClaimed());
        if (r.conflation()) {
            out.raw(",\"conflation\":true");
        }
        if (r.conflationConflict()) {
            out.raw(",\"conflationConflict\":true");
        }
        if (r.autopilot() != null) {
            out.raw(",\"autopilot\":{\"partitions\":").number(r.autopilot().partitions())
                    .raw(",\"batch\":").number(r.autopilot().batch()).raw("}");
        }
        return out.raw("}").toByteArray();
    }

    /**
     * About the size of the rendered body, so the buffer is not grown (and copied) on the way: a
     * popped batch is mostly its payloads, about 100 KB for 100 messages of 1 KB.
     */
    private static int renderedSize(PopService.Result r) {
        long size = 256;
        int perMessage = 420 + length(r.leaseId()) + length(r.consumerGroup());
        for (PopService.Message m : r.messages()) {
            size += perMessage + m.data().length + length(m.transactionId()) + length(m.partition())
                    + length(m.producerSub());
        }
        return (int) Math.min(size, Integer.MAX_VALUE - 8);
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }

    // ---------------------------------------------------------------- ack

    private void ackSingle(ServerRequest req, ServerResponse res) throws SQLException {
        JsonNode body = badBodyOnError(req);
        if (!body.isObject()) {
            throw new BadRequestException("bad body: an ack object is required");
        }
        String group = Names.check(Names.CONSUMER_GROUP, text(body, "consumerGroup", Tenants.QUEUE_MODE));
        sendAckResults(res, ack.ack(tenancy.of(req), group, List.of(ackItem(body, 0))));
    }

    private void ackBatch(ServerRequest req, ServerResponse res) throws SQLException {
        byte[] raw;
        try {
            raw = Json.rawBody(req);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
        AckBatchBody.Parsed body = AckBatchBody.parse(raw);
        List<AckService.Item> items = body.items();
        Names.check(Names.CONSUMER_GROUP, body.consumerGroup());
        sendAckResults(res, items.isEmpty() ? List.of() : ack.ack(tenancy.of(req), body.consumerGroup(), items));
    }

    static AckService.Item ackItem(JsonNode item, int index) {
        if (item == null || !item.isObject()) {
            throw new BadRequestException("bad body: acknowledgments[" + index + "] must be an object");
        }
        JsonNode status = item.get("status");
        return ackItem(text(item, "transactionId", ""), text(item, "partitionId", ""),
                status == null || status.isNull() ? null : status.asText(), text(item, "leaseId", ""),
                item.hasNonNull("error") ? item.get("error").asText() : null);
    }

    /** @param status as sent, null when absent or JSON null */
    static AckService.Item ackItem(String transactionId, String partition, String status, String leaseId,
                                   String error) {
        UUID partitionId;
        try {
            partitionId = UUID.fromString(partition);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("bad body: partitionId is not a UUID");
        }
        Names.check(Names.TRANSACTION_ID, transactionId);
        Names.check(Names.LEASE_ID, leaseId);
        Names.check(Names.FREE_TEXT, status, "status");
        Names.check(Names.FREE_TEXT, error, "error");
        return new AckService.Item(transactionId, partitionId, AckDecision.normalise(status), leaseId, error);
    }

    private void sendAckResults(ServerResponse res, List<AckService.Result> results) {
        metrics.acked(results);
        Json.sendBytes(res, Status.OK_200, renderAckResults(results));
    }

    /** The per-item ack results, written straight to bytes: as a tree they were about 5% of the consume CPU. */
    static byte[] renderAckResults(List<AckService.Result> results) {
        JsonBytes out = new JsonBytes(64 + results.size() * 160);
        out.raw("[");
        for (int i = 0; i < results.size(); i++) {
            AckService.Result r = results.get(i);
            out.raw(i == 0 ? "{\"index\":" : ",{\"index\":").number(r.index())
                    .raw(",\"transactionId\":").string(r.transactionId())
                    .raw(r.success() ? ",\"success\":true" : ",\"success\":false")
                    .raw(",\"error\":").string(r.error())
                    .raw(r.leaseReleased() ? ",\"leaseReleased\":true" : ",\"leaseReleased\":false")
                    .raw(r.dlq() ? ",\"dlq\":true" : ",\"dlq\":false")
                    .raw(r.noop() ? ",\"noop\":true}" : ",\"noop\":false}");
        }
        return out.raw("]").toByteArray();
    }

    // ---------------------------------------------------------------- lease

    private void extendLease(ServerRequest req, ServerResponse res) throws SQLException {
        String leaseId = Names.path(req, "leaseId", Names.LEASE_ID);
        int seconds = 60;
        try {
            JsonNode body = Json.body(req);
            if (body.hasNonNull("seconds") && body.get("seconds").canConvertToInt()) {
                seconds = body.get("seconds").asInt();
            }
        } catch (BadRequestException e) {
            // Empty or non-JSON bodies mean the default, never a 400 (reference behaviour); a body
            // whose framing broke leaves the connection unusable, so that one is refused.
            if (e.closesConnection()) {
                throw e;
            }
        }
        AckService.Renewal r = ack.renew(tenancy.of(req), leaseId, seconds);
        ObjectNode out = Json.object().put("leaseId", leaseId).put("success", r.renewed() > 0).put("renewed", r.renewed());
        String at = Wire.timestamp(r.expiresAt());
        out.put("newExpiresAt", at).put("expiresAt", at).put("lease_expires_at", at);
        Json.send(res, Status.OK_200, out);
    }

    // ---------------------------------------------------------------- helpers

    private static JsonNode badBodyOnError(ServerRequest req) {
        try {
            return Json.body(req);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
    }

    /** A name in the push body: refused as a "bad body", the push route's prefix for body errors. */
    private static String bodyName(Names.Rule rule, String value, String where) {
        try {
            return Names.check(rule, value, where);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
    }

    private static String text(JsonNode node, String field, String fallback) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() || v.asText().isEmpty() ? fallback : v.asText();
    }
}
