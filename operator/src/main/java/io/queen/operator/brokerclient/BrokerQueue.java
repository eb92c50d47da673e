package io.queen.operator.brokerclient;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A queue as {@code GET /api/v1/resources/queues/:queue} reports it.
 *
 * @param options the queue's effective options when the broker includes them in the answer, else null
 * @param pending messages not yet consumed by the slowest consumer group
 */
public record BrokerQueue(String name, String namespace, String task, JsonNode options, long pending) {
}
