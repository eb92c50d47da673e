package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.queen.broker.http.DatabaseOutageIT.allowConnections;
import static io.queen.broker.http.DatabaseOutageIT.gauge;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pushes while PostgreSQL goes away and comes back, over real HTTP: every push answered 201
 * ({@code queued} or {@code buffered}) is delivered exactly once, under the message id it was
 * answered with, whether the outage starts mid-traffic or in the middle of a spool replay; a spool
 * that cannot be written during an outage answers 503 with Retry-After, never a 2xx.
 */
class PushOutageIT {
    private static final String QUEUE = "outage.traffic";

    @TempDir
    Path spoolDir;

    /** What the broker answered for each item it took: item key (from the payload) to message id. */
    static final class Answers {
        final Map<String, String> acknowledged = new ConcurrentHashMap<>();
        final AtomicInteger queued = new AtomicInteger();
        final AtomicInteger buffered = new AtomicInteger();
        final List<String> refused = new CopyOnWriteArrayList<>();

        /** Records one push reply; a non-201 is a refusal, which the contract does not allow here. */
        void record(Reply r) {
            if (r.status() != 201) {
                refused.add(r.status() + " " + r.body());
                return;
            }
            for (JsonNode item : r.json()) {
                String status = item.get("status").asText();
                if (status.equals("queued")) {
                    queued.incrementAndGet();
                } else if (status.equals("buffered")) {
                    buffered.incrementAndGet();
                } else {
                    refused.add("item " + item);
                    continue;
                }
                acknowledged.put(item.get("transaction_id").asText(), item.get("message_id").asText());
            }
        }
    }

    /**
     * One push request of {@code size} items over three partitions; items of even requests carry a
     * client transactionId, the others get the broker's (the message id). Items are told apart by the
     * transactionId the broker answers, which is what it delivers.
     */
    static String request(String producer, int n, int size) {
        StringBuilder s = new StringBuilder("{\"items\":[");
        for (int i = 0; i < size; i++) {
            if (i > 0) {
                s.append(',');
            }
            s.append("{\"queue\":\"").append(QUEUE).append("\",\"partition\":\"p").append((n + i) % 3)
                    .append("\",\"payload\":{\"producer\":\"").append(producer).append("\",\"n\":").append(n)
                    .append(",\"i\":").append(i).append('}');
            if (n % 2 == 0) {
                s.append(",\"transactionId\":\"").append(producer).append('-').append(n).append('-').append(i)
                        .append('"');
            }
            s.append('}');
        }
        return s.append("]}").toString();
    }

    /** Pops (auto-ack) until the queue answers 204: transactionId to message id, failing on a second delivery. */
    static Map<String, String> deliverAll(HttpProbe http) {
        Map<String, String> delivered = new HashMap<>();
        while (true) {
            Reply r = http.get("/api/v1/pop/queue/" + QUEUE + "?batch=500&partitions=10&autoAck=true");
            if (r.status() == 204) {
                return delivered;
            }
            assertEquals(200, r.status(), r.body());
            for (JsonNode m : r.json().get("messages")) {
                String previous = delivered.put(m.get("transactionId").asText(), m.get("id").asText());
                assertEquals(null, previous, "delivered twice: " + m);
            }
        }
    }

    static long pending(HttpProbe http) {
        return http.get("/api/v1/status/buffers").json().get("pending").asLong();
    }

    static void assertDeliveredExactlyOnce(Answers answers, Map<String, String> delivered) {
        assertEquals(List.of(), answers.refused, "no push is refused during an outage while the spool is writable");
        assertEquals(answers.acknowledged.size(), delivered.size(), "as many delivered as acknowledged");
        // Same keys, and each under the message id its push was answered with (buffered ones too).
        assertEquals(answers.acknowledged, delivered);
    }

    @Test
    void everyPushAnswered201DuringAnOutageMidTrafficIsDeliveredExactlyOnce() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage_traffic");
        try (Broker broker = BrokerFixture.startWithSpool(db, spoolDir, Map.of("FILE_BUFFER_MAX_BATCH", "20"))) {
            HttpProbe http = new HttpProbe(broker.port());
            Answers answers = new Answers();
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> producers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                String producer = "w" + w;
                producers.add(Thread.ofVirtual().start(() -> {
                    for (int n = 0; running.get(); n++) {
                        answers.record(http.post("/api/v1/push", request(producer, n, 3)));
                        // Pacing, not a wait: four producers share two cores with the broker.
                        if (!BackgroundThread.pause(5)) {
                            return;
                        }
                    }
                }));
            }
            await().atMost(60, TimeUnit.SECONDS).until(() -> answers.queued.get() >= 60);

            allowConnections(db, false);
            try {
                await().atMost(90, TimeUnit.SECONDS).until(() -> answers.buffered.get() >= 90);
            } finally {
                allowConnections(db, true);
            }
            int queuedAtRestore = answers.queued.get();
            // Traffic goes on until pushes reach the database again.
            await().atMost(90, TimeUnit.SECONDS).until(() -> answers.queued.get() >= queuedAtRestore + 60);
            running.set(false);
            for (Thread t : producers) {
                t.join(60_000);
            }
            await().atMost(90, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> pending(http) == 0);

            Map<String, String> delivered = deliverAll(http);
            System.out.println("[outage mid-traffic] acknowledged " + answers.acknowledged.size() + " items ("
                    + answers.queued.get() + " queued, " + answers.buffered.get() + " buffered), refused "
                    + answers.refused.size() + ", delivered " + delivered.size());
            assertTrue(answers.buffered.get() >= 90 && answers.queued.get() >= 120);
            assertDeliveredExactlyOnce(answers, delivered);
        }
    }

    @Test
    void anOutageDuringTheSpoolReplayLosesAndDuplicatesNothing() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage_replay");
        // One item per replay call, so the drain lasts long enough to be cut in the middle.
        try (Broker broker = BrokerFixture.startWithSpool(db, spoolDir, Map.of("FILE_BUFFER_MAX_BATCH", "1"))) {
            HttpProbe http = new HttpProbe(broker.port());
            Answers answers = new Answers();
            answers.record(http.post("/api/v1/push", request("warm", 0, 3)));
            assertEquals(3, answers.queued.get());

            allowConnections(db, false);
            int spooled;
            long pendingAtSecondCut;
            try {
                for (int n = 0; n < 40; n++) {
                    answers.record(http.post("/api/v1/push", request("first", n, 50)));
                }
                spooled = answers.buffered.get();
                assertEquals(2000, spooled, "every item of the first outage is buffered: " + answers.refused);
            } finally {
                allowConnections(db, true);
            }
            // Cut again once the replay has begun and before it ends.
            await().atMost(90, TimeUnit.SECONDS).pollInterval(20, TimeUnit.MILLISECONDS)
                    .until(() -> pending(http) <= spooled - 100);
            allowConnections(db, false);
            try {
                pendingAtSecondCut = (long) gauge(http, "queen_file_buffer_pending");
                assertTrue(pendingAtSecondCut > 0 && pendingAtSecondCut < spooled,
                        "the second outage hits a replay in progress: " + pendingAtSecondCut + " pending");
                for (int n = 0; n < 10; n++) {
                    answers.record(http.post("/api/v1/push", request("second", n, 10)));
                }
                // The replay stops and waits: the spool says the database is down and items wait.
                await().atMost(30, TimeUnit.SECONDS).until(() -> gauge(http, "queen_file_buffer_db_healthy") == 0.0);
                assertTrue(gauge(http, "queen_file_buffer_pending") > 100);
            } finally {
                allowConnections(db, true);
            }
            await().atMost(120, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> pending(http) == 0);

            Map<String, String> delivered = deliverAll(http);
            System.out.println("[outage during replay] acknowledged " + answers.acknowledged.size() + " items ("
                    + answers.queued.get() + " queued, " + answers.buffered.get() + " buffered), "
                    + pendingAtSecondCut + " still spooled at the second cut, delivered " + delivered.size());
            assertEquals(2103, answers.acknowledged.size());
            assertDeliveredExactlyOnce(answers, delivered);
        }
    }

    @Test
    void anUnwritableSpoolDuringAnOutageAnswers503WithRetryAfterAndStoresNothing() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage_no_spool");
        Path notAFolder = spoolDir.resolve("file");
        Files.writeString(notAFolder, "not a folder");
        try (Broker broker = BrokerFixture.startWithSpool(db, notAFolder.resolve("spool"), Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            Answers answers = new Answers();
            answers.record(http.post("/api/v1/push", request("before", 0, 3)));
            assertEquals(3, answers.queued.get());

            HttpClient client = HttpClient.newHttpClient();
            allowConnections(db, false);
            HttpResponse<String> refused;
            try {
                refused = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.port()
                                + "/api/v1/push"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                        .POST(HttpRequest.BodyPublishers.ofString(request("lost", 0, 3))).build(),
                        HttpResponse.BodyHandlers.ofString());
            } finally {
                allowConnections(db, true);
            }
            assertEquals(503, refused.statusCode(), refused.body());
            assertEquals("5", refused.headers().firstValue("Retry-After").orElse(null));
            JsonNode error = new Reply(refused.statusCode(), refused.body()).json();
            assertEquals("spool_unavailable", error.get("code").asText(), refused.body());
            assertFalse(error.get("error").asText().isEmpty());
            assertEquals(3.0, gauge(http, "queen_file_buffer_failed"), "the refused items are counted");

            await().atMost(60, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> http.post("/api/v1/push", request("after", 0, 3)).status() == 201);
            Map<String, String> delivered = deliverAll(http);
            assertTrue(delivered.keySet().stream().noneMatch(txn -> txn.startsWith("lost-")),
                    "what was answered 503 was not stored: " + delivered.keySet());
            assertTrue(delivered.keySet().containsAll(answers.acknowledged.keySet()));
            assertEquals(6, delivered.size(), delivered.keySet().toString());
            assertEquals(1.0, gauge(http, "queen_file_buffer_db_healthy"), "the outage mark is cleared");
        }
    }
}
