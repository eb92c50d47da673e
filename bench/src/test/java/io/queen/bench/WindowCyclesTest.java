package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WindowCyclesTest {
    private final WindowCycles bodies = new WindowCycles("Q", "streams.q", "sink", new TumblingWindows(1000));

    @Test
    void anIngestCycleUpsertsEachWindowsNewCountWithItsEndAndAcksTheBatch() throws Exception {
        JsonNode batch = BrokerHttp.JSON.readTree("""
                [{"partitionId":"pid","partition":"p3","leaseId":"L","transactionId":"a","data":{"t":5100}},
                 {"partitionId":"pid","partition":"p3","leaseId":"L","transactionId":"b","data":{"t":6100}}]""");
        Map<Long, Long> counts = new TreeMap<>(Map.of(5000L, 7L, 6000L, 1L));
        JsonNode c = BrokerHttp.JSON.readTree(bodies.ingest(batch, counts));
        assertEquals("Q", c.path("query_id").asText());
        assertEquals("pid", c.path("partition_id").asText());
        assertEquals("streams.q", c.path("consumer_group").asText());
        assertEquals(2, c.path("state_ops").size());
        JsonNode op = c.path("state_ops").get(0);
        assertEquals("upsert", op.path("type").asText());
        assertEquals("win:5000", op.path("key").asText());
        assertEquals(7, op.path("value").path("count").asLong());
        assertEquals(6000, op.path("value").path("windowEnd").asLong(), "the field the ripe filter reads");
        assertEquals(0, c.path("push_items").size());
        assertEquals("L", c.path("ack").path("leaseId").asText());
        assertEquals("b", c.path("ack").path("transactionId").asText());
        assertEquals(2, c.path("ack").path("count").asInt());
        assertTrue(c.path("release_lease").asBoolean());
    }

    @Test
    void aFlushEmitsAndDeletesEachRipeRowWithoutAnAck() throws Exception {
        JsonNode ripe = BrokerHttp.JSON.readTree("""
                {"success":true,"rows":[{"key":"win:5000","value":{"count":7,"windowEnd":6000}},
                                        {"key":"win:6000","value":{"count":2,"windowEnd":7000}}]}""");
        assertEquals(Map.of(5000L, 7L, 6000L, 2L), WindowCycles.storedCounts(ripe));
        JsonNode f = BrokerHttp.JSON.readTree(bodies.flush("pid", "p3", ripe));
        assertEquals(List.of("delete", "delete"), List.of(f.path("state_ops").get(0).path("type").asText(),
                f.path("state_ops").get(1).path("type").asText()));
        assertEquals("win:6000", f.path("state_ops").get(1).path("key").asText());
        JsonNode item = f.path("push_items").get(0);
        assertEquals("sink", item.path("queue").asText());
        assertEquals("p3", item.path("partition").asText());
        assertEquals("p3", item.path("payload").path("key").asText());
        assertEquals(5000, item.path("payload").path("windowStart").asLong());
        assertEquals(7, item.path("payload").path("count").asLong());
        assertTrue(f.path("ack").isNull());
    }

    @Test
    void stateReadsNameTheWindowsOrTheRipeBound() throws Exception {
        JsonNode keys = BrokerHttp.JSON.readTree(bodies.stateOf("pid", List.of(5000L, 6000L)));
        assertEquals("win:6000", keys.path("keys").get(1).asText());
        JsonNode ripe = BrokerHttp.JSON.readTree(bodies.ripeState("pid", 6500));
        assertEquals("win:", ripe.path("key_prefix").asText());
        assertEquals(6500, ripe.path("ripe_at_or_before").asLong());
        assertEquals("pid", ripe.path("partition_id").asText());
    }
}
