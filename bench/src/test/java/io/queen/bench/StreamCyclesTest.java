package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StreamCyclesTest {
    @Test
    void aCycleUpsertsTheStateKeysMapsEveryMessageToTheSinkAndAcksTheBatch() throws Exception {
        JsonNode batch = BrokerHttp.JSON.readTree("""
                [{"partitionId":"p-id","partition":"p3","leaseId":"L","transactionId":"bench-4","data":{"seq":4}},
                 {"partitionId":"p-id","partition":"p3","leaseId":"L","transactionId":"bench-5","data":{"seq":5}}]""");
        JsonNode c = BrokerHttp.JSON.readTree(StreamCycles.body("Q", "streams.q", "sink", batch, 3, 9));
        assertEquals("Q", c.path("query_id").asText());
        assertEquals("p-id", c.path("partition_id").asText());
        assertEquals("streams.q", c.path("consumer_group").asText());
        assertEquals(3, c.path("state_ops").size());
        JsonNode op = c.path("state_ops").get(2);
        assertEquals("upsert", op.path("type").asText());
        assertEquals("agg:2", op.path("key").asText());
        assertEquals(5, op.path("value").path("lastSeq").asLong());
        assertEquals(2, c.path("push_items").size());
        JsonNode item = c.path("push_items").get(1);
        assertEquals("sink", item.path("queue").asText());
        assertEquals("p3", item.path("partition").asText());
        assertEquals(5, item.path("payload").path("seq").asLong());
        JsonNode ack = c.path("ack");
        assertEquals("L", ack.path("leaseId").asText());
        assertEquals("bench-5", ack.path("transactionId").asText());
        assertEquals(2, ack.path("count").asInt());
        assertEquals("completed", ack.path("status").asText());
        assertTrue(c.path("release_lease").asBoolean());
    }
}
