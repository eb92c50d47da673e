package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.RawHttp;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * While PostgreSQL refuses connections, every route that needs it answers 503 with Retry-After and
 * a JSON error in the client's terms (never a 500, never a 2xx carrying an error, never the
 * driver's text), and the broker serves again by itself afterwards.
 */
class OutageAnswersIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    record Call(String method, String path, String body) {
    }

    @Test
    void everyRouteThatNeedsTheDatabaseAnswers503WithRetryAfter() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage_answers");
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            http.push("oq", "p", "{\"n\":1}");
            JsonNode m = http.get("/api/v1/pop/queue/oq?batch=1&wait=false").json().get("messages").get(0);
            String pid = m.get("partitionId").asText();
            String txn = m.get("transactionId").asText();
            String lease = m.get("leaseId").asText();
            List<Call> calls = List.of(
                    new Call("GET", "/api/v1/pop/queue/oq?batch=1&wait=false", null),
                    new Call("GET", "/api/v1/pop/queue/oq/partition/p?wait=false", null),
                    new Call("GET", "/api/v1/pop?namespace=x&wait=false", null),
                    new Call("POST", "/api/v1/ack", "{\"transactionId\":\"" + txn + "\",\"partitionId\":\"" + pid
                            + "\",\"leaseId\":\"" + lease + "\",\"status\":\"completed\"}"),
                    new Call("POST", "/api/v1/ack/batch", "{\"acknowledgments\":[{\"transactionId\":\"" + txn
                            + "\",\"partitionId\":\"" + pid + "\",\"status\":\"completed\"}]}"),
                    new Call("POST", "/api/v1/lease/" + lease + "/extend", "{\"seconds\":30}"),
                    new Call("POST", "/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"oq\","
                            + "\"partition\":\"p\",\"payload\":1}]}]}"),
                    new Call("POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":\"oq\",\"partition\":\"p\",\"offset\":0}]}"),
                    new Call("POST", "/api/v1/configure", "{\"queue\":\"oq2\"}"),
                    new Call("GET", "/api/v1/resources/queues", null),
                    new Call("GET", "/api/v1/resources/queues/oq", null),
                    new Call("GET", "/api/v1/resources/overview", null),
                    new Call("DELETE", "/api/v1/resources/queues/oq", null),
                    new Call("GET", "/api/v1/consumer-groups", null),
                    new Call("POST", "/api/v1/consumer-groups/g/queues/oq/seek", "{\"toEnd\":true}"),
                    new Call("GET", "/api/v1/dlq?queue=oq", null),
                    new Call("GET", "/api/v1/messages?queue=oq", null),
                    new Call("GET", "/api/v1/messages/" + pid + "/" + txn, null),
                    new Call("POST", "/api/v1/traces", "{\"partitionId\":\"" + pid + "\",\"transactionId\":\"" + txn
                            + "\",\"data\":{}}"),
                    new Call("GET", "/api/v1/traces/names", null),
                    new Call("GET", "/api/v1/status", null),
                    new Call("GET", "/api/v1/status/queues", null),
                    new Call("GET", "/api/v1/analytics/queue-lag", null),
                    new Call("POST", "/api/v1/system/tenants/00000000-0000-0000-0000-000000000009/purge", "{}"));

            RawHttp raw = new RawHttp(broker.port());
            DatabaseOutageIT.allowConnections(db, false);
            List<String> wrong = new ArrayList<>();
            try {
                // All at once: each waits out the pool's connection timeout.
                List<Future<RawHttp.Answer>> answers = new ArrayList<>();
                try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                    for (Call c : calls) {
                        answers.add(pool.submit(() -> raw.send(c.method(), c.path(),
                                c.body() == null ? Map.of() : Map.of("Content-Type", "application/json"),
                                c.body() == null ? null : c.body().getBytes(StandardCharsets.UTF_8))));
                    }
                }
                for (int i = 0; i < calls.size(); i++) {
                    Call c = calls.get(i);
                    RawHttp.Answer a = answers.get(i).get();
                    String why = problem(a);
                    if (why != null) {
                        wrong.add(c.method() + " " + c.path() + " -> " + a.status() + " " + a.body() + ": " + why);
                    }
                }
                // The maintenance switch is the one write that works without the database: it is in
                // force on this broker at once, and says it is not stored yet.
                RawHttp.Answer flip = raw.send("POST", "/api/v1/system/maintenance/pop",
                        Map.of("Content-Type", "application/json"), "{\"enabled\":false}".getBytes(StandardCharsets.UTF_8));
                assertEquals(200, flip.status(), flip.body());
                assertEquals(false, MAPPER.readTree(flip.body()).path("stored").asBoolean(true), flip.body());
                RawHttp.Answer health = raw.send("GET", "/health", Map.of(), null);
                assertEquals(503, health.status(), health.body());
                assertTrue(!HostileInputIT.INTERNAL_TEXT.matcher(health.body()).find(), health.body());
            } finally {
                DatabaseOutageIT.allowConnections(db, true);
            }
            assertTrue(wrong.isEmpty(), wrong.size() + " of " + calls.size() + " routes answered wrongly:\n"
                    + String.join("\n", wrong));

            await().atMost(30, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> http.get("/api/v1/resources/queues").status() == 200);
        }
    }

    private static String problem(RawHttp.Answer a) throws IOException {
        if (a.status() != 503) {
            return "expected 503";
        }
        if (!a.headers().containsKey("retry-after")) {
            return "no Retry-After";
        }
        JsonNode body = MAPPER.readTree(a.body());
        if (!"database_unavailable".equals(body.path("code").asText()) || !body.path("errorId").isTextual()) {
            return "expected code database_unavailable and an errorId";
        }
        if (HostileInputIT.INTERNAL_TEXT.matcher(a.body()).find()) {
            return "internal text in the answer";
        }
        return null;
    }
}
