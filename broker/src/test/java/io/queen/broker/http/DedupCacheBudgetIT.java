package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A broker whose dedup cache is far smaller than what it wrote inside the window (1 MB: about
 * 10,000 exact messages, against 30,000 pushed) keeps the older ones as fingerprints. A duplicate
 * of any of them, old or recent, is still reported with the original's message id, and new
 * messages are still queued, over real HTTP and PostgreSQL.
 */
class DedupCacheBudgetIT {
    private static final int REQUESTS = 300;
    private static final int PER_REQUEST = 100;

    @Test
    void pastItsBudgetTheCacheStillFindsEveryDuplicate() {
        DatabaseSettings db = TestPostgres.freshDatabase("dedup_budget");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_DEDUP_CACHE_MB", "1"))) {
            HttpProbe http = new HttpProbe(broker.port());
            Map<String, String> ids = new HashMap<>();
            for (int r = 0; r < REQUESTS; r++) {
                StringBuilder items = new StringBuilder();
                for (int i = 0; i < PER_REQUEST; i++) {
                    int n = r * PER_REQUEST + i;
                    items.append(i == 0 ? "" : ",").append("{\"queue\":\"budget\",\"payload\":").append(n)
                            .append(",\"transactionId\":\"t").append(n).append("\"}");
                }
                JsonNode results = http.post("/api/v1/push", "{\"items\":[" + items + "]}").json();
                for (JsonNode result : results) {
                    assertEquals("queued", result.get("status").asText(), result.toString());
                    ids.put(result.get("transaction_id").asText(), result.get("message_id").asText());
                }
            }

            // t5 was compacted long ago, t29950 sits in the newest exact segment, t15000 in between.
            String body = "{\"items\":[{\"queue\":\"budget\",\"payload\":1,\"transactionId\":\"t5\"},"
                    + "{\"queue\":\"budget\",\"payload\":2,\"transactionId\":\"fresh\"},"
                    + "{\"queue\":\"budget\",\"payload\":3,\"transactionId\":\"t29950\"},"
                    + "{\"queue\":\"budget\",\"payload\":4,\"transactionId\":\"t15000\"}]}";
            JsonNode again = http.post("/api/v1/push", body).json();
            assertEquals("duplicate", again.get(0).get("status").asText());
            assertEquals(ids.get("t5"), again.get(0).get("message_id").asText(), "the original's id");
            assertEquals("queued", again.get(1).get("status").asText());
            assertEquals("duplicate", again.get(2).get("status").asText());
            assertEquals(ids.get("t29950"), again.get(2).get("message_id").asText());
            assertEquals("duplicate", again.get(3).get("status").asText());
            assertEquals(ids.get("t15000"), again.get(3).get("message_id").asText());

            JsonNode repeatFresh = http.post("/api/v1/push",
                    "{\"items\":[{\"queue\":\"budget\",\"payload\":5,\"transactionId\":\"fresh\"}]}").json();
            assertEquals("duplicate", repeatFresh.get(0).get("status").asText(), "the message queued just now");
            assertEquals(again.get(1).get("message_id").asText(), repeatFresh.get(0).get("message_id").asText());
        }
    }
}
