package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The body of one {@code POST /streams/v1/cycle} for a popped source batch (all of one partition,
 * under one lease): {@code stateKeys} upserts of a running aggregate ({@code agg:<i>}, each with a
 * count, the batch's last sequence number and a windowEnd as a window operator keeps), one sink
 * item per source message in the same partition name, and the ack of the whole batch.
 */
final class StreamCycles {
    private StreamCycles() {
    }

    static String body(String queryId, String group, String sink, JsonNode batch, int stateKeys, long cycle) {
        JsonNode first = batch.get(0);
        JsonNode last = batch.get(batch.size() - 1);
        long lastSeq = last.path("data").path(Payloads.SEQ).asLong();
        StringBuilder sb = new StringBuilder(256 + batch.size() * 96);
        sb.append("{\"query_id\":\"").append(queryId).append("\",\"partition_id\":\"")
          .append(first.path("partitionId").asText()).append("\",\"consumer_group\":\"").append(group)
          .append("\",\"state_ops\":[");
        for (int k = 0; k < stateKeys; k++) {
            sb.append(k == 0 ? "" : ",").append("{\"type\":\"upsert\",\"key\":\"agg:").append(k)
              .append("\",\"value\":{\"count\":").append(batch.size()).append(",\"lastSeq\":").append(lastSeq)
              .append(",\"cycle\":").append(cycle).append(",\"windowEnd\":").append(System.currentTimeMillis())
              .append("}}");
        }
        sb.append("],\"push_items\":[");
        String partition = first.path("partition").asText("Default");
        for (int i = 0; i < batch.size(); i++) {
            sb.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(sink).append("\",\"partition\":\"")
              .append(partition).append("\",\"payload\":{\"seq\":")
              .append(batch.get(i).path("data").path(Payloads.SEQ).asLong()).append(",\"mapped\":true}}");
        }
        sb.append("],\"ack\":{\"transactionId\":\"").append(last.path("transactionId").asText())
          .append("\",\"leaseId\":\"").append(last.path("leaseId").asText())
          .append("\",\"status\":\"completed\",\"count\":").append(batch.size())
          .append("},\"release_lease\":true}");
        return sb.toString();
    }
}
