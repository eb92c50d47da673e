package io.queen.bench;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PayloadsTest {
    @Test
    void payloadIsJsonOfTheRequestedSizeCarryingSeqAndSendTime() throws Exception {
        byte[] bytes = new Payloads(1024).bytes(123_456, 987_654_321L);
        JsonNode json = BrokerHttp.JSON.readTree(bytes);
        assertEquals(123_456, json.get(Payloads.SEQ).asLong());
        assertEquals(987_654_321L, json.get(Payloads.SENT_AT).asLong());
        assertEquals(1024, bytes.length);
    }

    @Test
    void tinyPayloadsStayValidJson() throws Exception {
        assertTrue(BrokerHttp.JSON.readTree(new Payloads(1).bytes(1, 2)).isObject());
    }
}
