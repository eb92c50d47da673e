package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Map;
import java.util.TreeMap;

/**
 * The request bodies of the tumbling-window count under {@code /streams/v1}: the state reads
 * ({@code state/get} of the windows a batch touches, and of the ripe windows), the ingest cycle
 * (one upsert per window touched, holding its new count, and the ack of the popped batch) and the
 * flush cycle (per ripe window one sink result and the delete of its row, no ack).
 */
final class WindowCycles {
    /** The source message's event time field, epoch milliseconds. */
    static final String EVENT_TIME = "t";

    private final String queryId;
    private final String group;
    private final String sink;
    private final TumblingWindows windows;

    WindowCycles(String queryId, String group, String sink, TumblingWindows windows) {
        this.queryId = queryId;
        this.group = group;
        this.sink = sink;
        this.windows = windows;
    }

    /** {@code state/get} of the rows of {@code starts}' windows. */
    String stateOf(String partitionId, Iterable<Long> starts) {
        ObjectNode b = base(partitionId);
        ArrayNode keys = b.putArray("keys");
        for (long s : starts) {
            keys.add(TumblingWindows.key(s));
        }
        return b.toString();
    }

    /** {@code state/get} of the window rows whose end is at or before {@code ripeAtMs}. */
    String ripeState(String partitionId, long ripeAtMs) {
        ObjectNode b = base(partitionId);
        b.putArray("keys");
        b.put("key_prefix", TumblingWindows.KEY_PREFIX).put("ripe_at_or_before", ripeAtMs);
        return b.toString();
    }

    /** The counts a {@code state/get} answer holds, by window start (absent windows are not in it). */
    static Map<Long, Long> storedCounts(JsonNode stateAnswer) {
        Map<Long, Long> out = new TreeMap<>();
        for (JsonNode row : stateAnswer.path("rows")) {
            out.put(TumblingWindows.startOf(row.path("key").asText()), row.path("value").path("count").asLong());
        }
        return out;
    }

    /** The cycle of a popped batch (one partition, one lease): window counts {@code counts} (new totals), the ack. */
    String ingest(JsonNode batch, Map<Long, Long> counts) {
        JsonNode last = batch.get(batch.size() - 1);
        ObjectNode b = base(batch.get(0).path("partitionId").asText()).put("consumer_group", group);
        ArrayNode ops = b.putArray("state_ops");
        for (var e : counts.entrySet()) {
            ObjectNode value = ops.addObject().put("type", "upsert").put("key", TumblingWindows.key(e.getKey()))
                    .putObject("value");
            value.put("count", e.getValue()).put("windowStart", e.getKey()).put("windowEnd", windows.end(e.getKey()));
        }
        b.putArray("push_items");
        b.putObject("ack").put("transactionId", last.path("transactionId").asText())
                .put("leaseId", last.path("leaseId").asText()).put("status", "completed").put("count", batch.size());
        b.put("release_lease", true);
        return b.toString();
    }

    /** The flush of the ripe rows of a {@code state/get} answer: one sink result and one delete per row, no ack. */
    String flush(String partitionId, String partitionName, JsonNode ripeAnswer) {
        ObjectNode b = base(partitionId).put("consumer_group", group);
        ArrayNode ops = b.putArray("state_ops");
        ArrayNode items = b.putArray("push_items");
        for (JsonNode row : ripeAnswer.path("rows")) {
            String key = row.path("key").asText();
            long start = TumblingWindows.startOf(key);
            ops.addObject().put("type", "delete").put("key", key);
            items.addObject().put("queue", sink).put("partition", partitionName).putObject("payload")
                    .put("key", partitionName).put("windowStart", start).put("windowEnd", windows.end(start))
                    .put("count", row.path("value").path("count").asLong());
        }
        b.putNull("ack");
        return b.toString();
    }

    private ObjectNode base(String partitionId) {
        return BrokerHttp.JSON.createObjectNode().put("query_id", queryId).put("partition_id", partitionId);
    }
}
