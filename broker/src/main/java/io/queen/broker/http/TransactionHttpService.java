package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.TransactionService;
import io.queen.broker.engine.kv.KvException;
import io.queen.broker.engine.kv.KvJson;
import io.queen.broker.engine.kv.KvResult;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.engine.timers.TimerException;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /api/v1/transaction} (broker/DESIGN.md, Transaction route). A committed or rolled-back
 * transaction is a 200 whose body says which; malformed requests are 400 in the same envelope
 * with reason {@code bad_request}. The riders are the top-level arrays {@code kv} (the operations of
 * {@code POST /kv} but getPrefix) and {@code timers} (those of {@code POST /timers}); their answers
 * follow the operations' in {@code results}, typed {@code kv} and {@code timer}, with {@code index}
 * in that flat space and {@code opIndex} in the rider's own array. A paused KV or timer schedule is a
 * 403 here, in the same envelope with the surface's code as error and reason: a bundle carries
 * messages, and retrying it against a paused cell would only spin.
 */
public final class TransactionHttpService implements HttpService {
    private final TransactionService transactions;
    private final Tenancy tenancy;

    public TransactionHttpService(TransactionService transactions, Tenancy tenancy) {
        this.transactions = transactions;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/transaction", this::transaction);
    }

    private void transaction(ServerRequest req, ServerResponse res) throws SQLException {
        List<TransactionService.Op> ops;
        List<String> leases = new ArrayList<>();
        TransactionService.Riders riders;
        try {
            byte[] raw = Json.rawBody(req);
            JsonNode body = tree(Json.MAPPER, raw);
            // KV values are the client's JSON to keep exactly: the rider is read again without doubles.
            riders = riders(body.has("kv") ? tree(KvJson.MAPPER, raw) : body, body);
            ops = parse(body, !riders.kv().isEmpty() || !riders.timers().isEmpty());
            JsonNode required = body.get("requiredLeases");
            if (required != null && required.isArray()) {
                required.forEach(l -> {
                    if (l.isTextual() && !l.asText().isEmpty()) {
                        leases.add(Names.check(Names.LEASE_ID, l.asText(), "requiredLeases[]"));
                    }
                });
            }
        } catch (BadRequestException e) {
            send(res, Status.BAD_REQUEST_400, envelope(UuidV7.next().toString(), e.getMessage(), "bad_request"));
            return;
        }
        UUID tenant = tenancy.of(req);
        TransactionService.Outcome o;
        try {
            o = transactions.execute(tenant, ops, leases, riders);
        } catch (KvException e) {
            if (e.kind() == KvException.Kind.RATE_LIMITED) {
                res.header(io.helidon.http.HeaderNames.RETRY_AFTER, String.valueOf(e.retryAfterSeconds()));
            }
            refused(res, switch (e.kind()) {
                case DISABLED, FORBIDDEN -> Status.FORBIDDEN_403;
                case RATE_LIMITED -> Status.TOO_MANY_REQUESTS_429;
                case TOO_LARGE -> Status.OK_200;
                case BAD_REQUEST -> Status.BAD_REQUEST_400;
            }, "kv", e.error(), e.reason(), e.detail());
            return;
        } catch (TimerException e) {
            if (e.kind() == TimerException.Kind.RATE_LIMITED) {
                res.header(io.helidon.http.HeaderNames.RETRY_AFTER, String.valueOf(e.retryAfterSeconds()));
            }
            refused(res, switch (e.kind()) {
                case DISABLED, QUOTA -> Status.FORBIDDEN_403;
                case RATE_LIMITED -> Status.TOO_MANY_REQUESTS_429;
                case TOO_LARGE, FORBIDDEN -> Status.OK_200;
                case BAD_REQUEST -> Status.BAD_REQUEST_400;
            }, "timers", e.error(), e.reason(), e.detail());
            return;
        }
        if (!o.success()) {
            ObjectNode out = envelope(o.transactionId(), o.error(), o.reason());
            if (o.lost() != null) {
                // The same verdict POST /kv answers, so a client reads it the same way from both routes.
                out.put("ok", false);
                if (o.lost().failedIndex() != null || o.lost().kvReason() != null) {
                    out.put("failedIndex", o.lost().failedIndex());
                    out.put("kvReason", o.lost().kvReason());
                    out.put("version", o.lost().version());
                    out.set("value", o.lost().value());
                }
            }
            send(res, Status.OK_200, out);
            return;
        }
        ObjectNode out = Json.object().put("transactionId", o.transactionId()).put("success", true);
        ArrayNode results = out.putArray("results");
        for (TransactionService.OpResult r : o.results()) {
            ObjectNode item = results.addObject().put("index", r.index()).put("type", r.type()).put("success", true)
                    .put("transactionId", r.transactionId());
            if ("ack".equals(r.type())) {
                item.putNull("error");
                item.put("dlq", r.dlq());
            } else {
                item.put("messageId", r.messageId().toString()).put("queueName", r.queueName());
                if (r.duplicate()) {
                    item.put("duplicate", true);
                }
            }
        }
        int base = o.results().size();
        for (int i = 0; i < o.kv().size(); i++) {
            KvResult r = o.kv().get(i);
            ObjectNode item = results.addObject().put("index", base + i).put("type", "kv").put("opIndex", i);
            ObjectNode rendered = KvHttpService.render(r);
            rendered.remove("index");
            item.setAll(rendered);
        }
        base += o.kv().size();
        for (int i = 0; i < o.timers().size(); i++) {
            ObjectNode item = results.addObject().put("index", base + i).put("type", "timer").put("opIndex", i);
            JsonNode t = o.timers().get(i);
            if (t.isObject()) {
                item.setAll((ObjectNode) t.deepCopy());
            }
        }
        send(res, Status.OK_200, out);
    }

    /** KV values are exact decimals; the body goes out through the KV surface's writer. */
    private static void send(ServerResponse res, Status status, ObjectNode body) {
        Json.sendBytes(res, status, KvJson.bytes(body));
    }

    /**
     * A rider refused before any work: a shape error is a 400 bad_request, a size or the timer horizon
     * a 200 rollback with its reason, a paused surface a 403 carrying the surface's code as error and
     * reason. {@code error} keeps the surface's identifier in it, so the refusal is readable as is.
     */
    private static void refused(ServerResponse res, Status status, String rider, String error, String reason,
                                String detail) {
        String txId = UuidV7.next().toString();
        ObjectNode out;
        if (status == Status.FORBIDDEN_403 || status == Status.TOO_MANY_REQUESTS_429) {
            out = envelope(txId, error, reason);
        } else if (status == Status.OK_200) {
            out = envelope(txId, rider + ": " + detail + " (" + reason + ")",
                    "timer_horizon_exceeded".equals(error) ? "timer_horizon_exceeded" : "payload_too_large");
        } else {
            out = envelope(txId, rider + ": " + detail + " (" + reason + ")", "bad_request");
        }
        if (detail != null) {
            out.put("detail", detail);
        }
        send(res, status, out);
    }

    /** The top-level rider arrays ({@code kv} from {@code exact}); absent or null is none, not an array a 400. */
    static TransactionService.Riders riders(JsonNode exact, JsonNode body) {
        if (body == null || !body.isObject() || !exact.isObject()) {
            return TransactionService.Riders.NONE;
        }
        return new TransactionService.Riders(rider(exact, "kv"), rider(body, "timers"));
    }

    private static JsonNode tree(com.fasterxml.jackson.databind.ObjectMapper mapper, byte[] raw) {
        if (raw.length == 0) {
            throw new BadRequestException("request body is empty; a JSON object is required");
        }
        try {
            JsonNode tree = mapper.readTree(raw);
            Json.requireStorable(tree);
            return tree;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new BadRequestException("invalid JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new BadRequestException("cannot read request body as JSON");
        }
    }

    private static List<JsonNode> rider(JsonNode body, String field) {
        JsonNode r = body.get(field);
        if (r == null || r.isNull()) {
            return List.of();
        }
        if (!r.isArray()) {
            throw new BadRequestException(field + " must be an array of operations");
        }
        List<JsonNode> out = new ArrayList<>(r.size());
        r.forEach(out::add);
        return out;
    }

    private static ObjectNode envelope(String txId, String error, String reason) {
        ObjectNode out = Json.object().put("transactionId", txId).put("success", false).put("error", error);
        out.putArray("results");
        out.put("reason", reason);
        return out;
    }

    static List<TransactionService.Op> parse(JsonNode body) {
        return parse(body, false);
    }

    /** The operations, flattened; {@code anyRider}: the call carries a rider, so none is fine. */
    static List<TransactionService.Op> parse(JsonNode body, boolean anyRider) {
        if (body == null || !body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        JsonNode operations = body.get("operations");
        if (operations == null || !operations.isArray()) {
            throw new BadRequestException("operations must be an array");
        }
        List<TransactionService.Op> ops = new ArrayList<>();
        for (int i = 0; i < operations.size(); i++) {
            JsonNode op = operations.get(i);
            String type = op != null && op.hasNonNull("type") ? op.get("type").asText() : "";
            switch (type) {
                case "push" -> {
                    JsonNode items = op.get("items");
                    if (items != null && items.isArray()) {
                        for (JsonNode item : items) {
                            ops.add(new TransactionService.PushOp(ops.size(), pushItem(item, i)));
                        }
                    } else {
                        ops.add(new TransactionService.PushOp(ops.size(), pushItem(op, i)));
                    }
                }
                case "ack" -> {
                    AckService.Item item = BodyItems.ackItem(op, i);
                    String group = op.hasNonNull("consumerGroup") && !op.get("consumerGroup").asText().isEmpty()
                            ? op.get("consumerGroup").asText() : Tenants.QUEUE_MODE;
                    Names.check(Names.CONSUMER_GROUP, group, "operations[" + i + "].consumerGroup");
                    ops.add(new TransactionService.AckOp(ops.size(), item, group));
                }
                case "kv", "timer", "timers" -> throw new BadRequestException("operations[" + i + "]: " + type
                        + " operations go in the top-level " + (type.equals("kv") ? "kv" : "timers")
                        + " array, beside operations");
                default -> throw new BadRequestException("operations[" + i + "]: unknown operation type \"" + type + "\"");
            }
        }
        if (ops.isEmpty() && !anyRider) {
            throw new BadRequestException("operations must not be empty");
        }
        return ops;
    }

    /**
     * Transaction push items: payload or data (default {}), partition kept even when "", traceId only
     * if a UUID. No producerSub: the reference stamps it on {@code /push} only (its transaction frames
     * carry none), so a message written here shows {@code "producerSub": null}.
     */
    private static PushService.Item pushItem(JsonNode item, int opIndex) {
        if (item == null || !item.isObject()) {
            throw new BadRequestException("operations[" + opIndex + "]: a push item must be an object");
        }
        JsonNode queue = item.get("queue");
        if (queue == null || !queue.isTextual() || queue.asText().isEmpty()) {
            throw new BadRequestException("operations[" + opIndex + "]: queue is required");
        }
        String partition = item.has("partition") && item.get("partition").isTextual()
                ? item.get("partition").asText() : Tenants.DEFAULT_PARTITION;
        JsonNode payload = item.has("payload") ? item.get("payload") : item.has("data") ? item.get("data")
                : Json.object();
        String txn = item.hasNonNull("transactionId") && !item.get("transactionId").asText().isEmpty()
                ? item.get("transactionId").asText() : null;
        UUID trace = null;
        if (item.hasNonNull("traceId")) {
            try {
                trace = UUID.fromString(item.get("traceId").asText());
            } catch (IllegalArgumentException ignored) {
                // The reference drops a traceId that is not a UUID.
            }
        }
        String where = "operations[" + opIndex + "].";
        byte[] bytes = Json.bytes(payload);
        String unstorable = PayloadText.problem(bytes);
        if (unstorable != null) {
            throw new BadRequestException("invalid " + where + "payload: " + unstorable);
        }
        return new PushService.Item(Names.check(Names.QUEUE, queue.asText(), where + "queue"),
                Names.check(Names.PARTITION, partition, where + "partition"), bytes,
                Names.check(Names.TRANSACTION_ID, txn, where + "transactionId"), trace);
    }
}
