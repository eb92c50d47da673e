package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.engine.AckDecision;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.PushService;
import io.queen.broker.engine.Tenants;

import java.util.UUID;

/**
 * One push item and one ack item from the fields a body gave, validated at the edge: the checks and
 * the error texts that {@code /push} ({@link PushBody}), {@code /ack}, {@code /ack/batch}
 * ({@link AckBatchBody}) and {@code /transaction} share.
 */
final class BodyItems {
    private BodyItems() {
    }

    /**
     * One push item from its fields as sent (null when absent), validated.
     *
     * @param payload     the item's payload exactly as sent, or null when the item has none
     * @param producerSub the caller's verified token subject, null for none: never read from the body
     */
    static PushService.Item pushItem(JsonNode queueNode, JsonNode partitionNode, JsonNode t, byte[] payload,
                                     int index, String producerSub) {
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
        return new PushService.Item(queue, partition, payload, txn, null, producerSub);
    }

    /** One element of an ack body's {@code acknowledgments} (or the single ack's body itself). */
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

    /** A name in the push body: refused as a "bad body", the push route's prefix for body errors. */
    private static String bodyName(Names.Rule rule, String value, String where) {
        try {
            return Names.check(rule, value, where);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
    }

    /** A field as text; the fallback when it is absent, JSON null or empty. */
    static String text(JsonNode node, String field, String fallback) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() || v.asText().isEmpty() ? fallback : v.asText();
    }
}
