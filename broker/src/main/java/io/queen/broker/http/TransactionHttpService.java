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
import io.queen.broker.engine.segment.UuidV7;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /api/v1/transaction} (broker/DESIGN.md, Transaction route). A committed or rolled-back
 * transaction is a 200 whose body says which; malformed requests are 400 in the same envelope
 * with reason {@code bad_request}.
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
        try {
            JsonNode body = Json.body(req);
            ops = parse(body);
            JsonNode required = body.get("requiredLeases");
            if (required != null && required.isArray()) {
                required.forEach(l -> {
                    if (l.isTextual() && !l.asText().isEmpty()) {
                        leases.add(Names.check(Names.LEASE_ID, l.asText(), "requiredLeases[]"));
                    }
                });
            }
        } catch (BadRequestException e) {
            Json.send(res, Status.BAD_REQUEST_400, envelope(UuidV7.next().toString(), e.getMessage(), "bad_request"));
            return;
        }
        TransactionService.Outcome o = transactions.execute(tenancy.of(req), ops, leases);
        if (!o.success()) {
            Json.send(res, Status.OK_200, envelope(o.transactionId(), o.error(), o.reason()));
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
        Json.send(res, Status.OK_200, out);
    }

    private static ObjectNode envelope(String txId, String error, String reason) {
        ObjectNode out = Json.object().put("transactionId", txId).put("success", false).put("error", error);
        out.putArray("results");
        out.put("reason", reason);
        return out;
    }

    static List<TransactionService.Op> parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        for (String rider : List.of("kv", "timers")) {
            JsonNode r = body.get(rider);
            if (r != null && r.isArray() && !r.isEmpty()) {
                throw new BadRequestException(rider + " riders are not supported by this broker");
            }
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
                default -> throw new BadRequestException("operations[" + i + "]: unknown operation type \"" + type + "\"");
            }
        }
        if (ops.isEmpty()) {
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
