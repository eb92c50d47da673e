package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvRequestsTest {
    @Test
    void aCallNamesDistinctKeysOfItsClientsSliceWrappingAtTheEnd() {
        List<String> keys = KvRequests.keys(2, 10, 8, 5);
        assertEquals(List.of("k28", "k29", "k20", "k21", "k22"), keys);
        assertEquals(10, new HashSet<>(KvRequests.keys(1, 10, 3, 10)).size(), "a whole slice, each key once");
    }

    @Test
    void putsAreForeverWithAValueAndGetsNameTheirKeys() throws Exception {
        JsonNode puts = BrokerHttp.JSON.readTree(KvRequests.puts(List.of("k1", "k2"), 7)).path("operations");
        assertEquals(2, puts.size());
        JsonNode put = puts.get(1);
        assertEquals("put", put.path("op").asText());
        assertEquals(KvRequests.NAMESPACE, put.path("ns").asText());
        assertEquals("k2", put.path("key").asText());
        assertEquals(7, put.path("value").path("n").asLong());
        assertTrue(put.path("forever").asBoolean(), "a put must declare its expiry");
        JsonNode gets = BrokerHttp.JSON.readTree(KvRequests.gets(List.of("k9"))).path("operations");
        assertEquals("get", gets.get(0).path("op").asText());
        assertEquals("k9", gets.get(0).path("key").asText());
    }
}
