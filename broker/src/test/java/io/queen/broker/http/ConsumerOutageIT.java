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

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producers, long-polling consumers that ack, and the transaction route, while PostgreSQL goes away
 * and comes back: no answer is a 500, a long-poll parked when the database left comes back (an
 * answer, not a hang), every push answered 201 is acked by the consumer group after recovery, and
 * none is stored twice.
 */
class ConsumerOutageIT {
    private static final String QUEUE = "outage.consume";

    @TempDir
    Path spoolDir;

    @Test
    void consumersAndProducersThroughAnOutageLoseNothingAndStoreNothingTwice() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("consumer_outage");
        try (Broker broker = BrokerFixture.start(db, Map.of("FILE_BUFFER_DIR", spoolDir.toString(),
                "FILE_BUFFER_FLUSH_MS", "50"))) {
            HttpProbe http = new HttpProbe(broker.port());
            Set<String> pushed = ConcurrentHashMap.newKeySet();
            Map<String, Integer> acked = new ConcurrentHashMap<>();
            List<String> serverErrors = new CopyOnWriteArrayList<>();
            AtomicBoolean producing = new AtomicBoolean(true);
            AtomicBoolean consuming = new AtomicBoolean(true);
            // What the traffic saw, so each phase lasts until it has shown what it is for.
            AtomicInteger queued = new AtomicInteger();
            AtomicInteger buffered = new AtomicInteger();
            AtomicInteger committedTransactions = new AtomicInteger();
            AtomicInteger refusedTransactions = new AtomicInteger();

            Thread producer = Thread.ofVirtual().start(() -> {
                for (int n = 0; producing.get(); n++) {
                    String key = "k" + n;
                    Reply r = http.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + QUEUE + "\",\"partition\":\"p"
                            + (n % 3) + "\",\"payload\":{\"key\":\"" + key + "\"},\"transactionId\":\"" + key + "\"}]}");
                    if (r.status() == 201) {
                        pushed.add(key);
                        boolean spooled = "buffered".equals(r.json().path(0).path("status").asText());
                        (spooled ? buffered : queued).incrementAndGet();
                    } else if (r.status() >= 500) {
                        serverErrors.add("push " + r.status() + " " + r.body());
                    }
                    BackgroundThread.pause(20); // Pacing, not a wait: it only spaces the traffic.
                }
            });
            // Transactions: a push through the route that is all-or-nothing; 503 during the outage.
            Thread transactions = Thread.ofVirtual().start(() -> {
                for (int n = 0; producing.get(); n++) {
                    String key = "t" + n;
                    Reply r = http.post("/api/v1/transaction", "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\""
                            + QUEUE + "\",\"partition\":\"tx\",\"payload\":{\"key\":\"" + key + "\"},\"transactionId\":\""
                            + key + "\"}]}]}");
                    if (r.status() == 200 && r.json().path("success").asBoolean()) {
                        pushed.add(key);
                        committedTransactions.incrementAndGet();
                    } else if (r.status() == 503) {
                        refusedTransactions.incrementAndGet();
                    } else if (r.status() >= 500) {
                        serverErrors.add("transaction " + r.status() + " " + r.body());
                    }
                    BackgroundThread.pause(50);
                }
            });
            List<Long> longPollMillis = new CopyOnWriteArrayList<>();
            Thread consumer = Thread.ofVirtual().start(() -> {
                while (consuming.get()) {
                    long start = System.nanoTime();
                    Reply pop = http.get("/api/v1/pop/queue/" + QUEUE + "?batch=50&wait=true&timeout=2000"
                            + "&consumerGroup=g&subscriptionMode=all&leaseSeconds=3");
                    longPollMillis.add((System.nanoTime() - start) / 1_000_000);
                    if (pop.status() >= 500) {
                        if (pop.status() != 503) {
                            serverErrors.add("pop " + pop.status() + " " + pop.body());
                        }
                        BackgroundThread.pause(200); // A client's back-off after a 503.
                        continue;
                    }
                    if (pop.status() != 200) {
                        continue;
                    }
                    List<JsonNode> messages = new ArrayList<>();
                    pop.json().path("messages").forEach(messages::add);
                    StringBuilder acks = new StringBuilder();
                    for (JsonNode m : messages) {
                        if (!acks.isEmpty()) {
                            acks.append(',');
                        }
                        acks.append("{\"transactionId\":\"").append(m.get("transactionId").asText())
                                .append("\",\"partitionId\":\"").append(m.get("partitionId").asText())
                                .append("\",\"leaseId\":\"").append(m.get("leaseId").asText())
                                .append("\",\"status\":\"completed\"}");
                    }
                    Reply ack = http.post("/api/v1/ack/batch", "{\"consumerGroup\":\"g\",\"acknowledgments\":[" + acks + "]}");
                    if (ack.status() == 200) {
                        for (int i = 0; i < messages.size(); i++) {
                            if (ack.json().get(i).path("success").asBoolean()) {
                                acked.merge(messages.get(i).path("data").path("key").asText(), 1, Integer::sum);
                            }
                        }
                    } else if (ack.status() >= 500 && ack.status() != 503) {
                        serverErrors.add("ack " + ack.status() + " " + ack.body());
                    }
                }
            });

            await("traffic flows: pushes and transactions stored, messages acked")
                    .atMost(60, TimeUnit.SECONDS).pollInterval(50, TimeUnit.MILLISECONDS)
                    .until(() -> queued.get() >= 20 && committedTransactions.get() >= 3 && acked.size() >= 10);
            DatabaseOutageIT.allowConnections(db, false);
            long cutAt = System.nanoTime();
            try {
                int bufferedBefore = buffered.get();
                int refusedBefore = refusedTransactions.get();
                int popsBefore = longPollMillis.size();
                // Longer than the 3 s lease too, so that leases taken before the cut run out during it
                // and their messages come back after it.
                await("the outage is felt: pushes spooled, transactions refused, long-polls answered, leases out")
                        .atMost(60, TimeUnit.SECONDS).pollInterval(50, TimeUnit.MILLISECONDS)
                        .until(() -> buffered.get() >= bufferedBefore + 50
                                && refusedTransactions.get() >= refusedBefore + 3
                                && longPollMillis.size() >= popsBefore + 3
                                && System.nanoTime() - cutAt > TimeUnit.SECONDS.toNanos(4));
            } finally {
                DatabaseOutageIT.allowConnections(db, true);
            }
            int queuedAtRestore = queued.get();
            int committedAtRestore = committedTransactions.get();
            await("traffic reaches the database again").atMost(90, TimeUnit.SECONDS)
                    .pollInterval(50, TimeUnit.MILLISECONDS)
                    .until(() -> queued.get() >= queuedAtRestore + 20
                            && committedTransactions.get() >= committedAtRestore + 3);
            producing.set(false);
            producer.join();
            transactions.join();

            await().atMost(90, TimeUnit.SECONDS).pollInterval(250, TimeUnit.MILLISECONDS)
                    .until(() -> acked.keySet().containsAll(pushed));
            consuming.set(false);
            consumer.join();

            assertTrue(serverErrors.isEmpty(), "answers other than 503 among the 5xx: " + serverErrors);
            assertTrue(pushed.size() > 50, "traffic flowed: " + pushed.size());
            assertTrue(longPollMillis.stream().allMatch(ms -> ms < 20_000),
                    "every long-poll came back: " + longPollMillis.stream().mapToLong(Long::longValue).max());
            // Stored once each: a fresh group reading everything sees each key exactly once.
            Map<String, Integer> stored = new HashMap<>();
            while (true) {
                Reply r = http.get("/api/v1/pop/queue/" + QUEUE + "?batch=1000&wait=false&autoAck=true"
                        + "&consumerGroup=audit&subscriptionMode=all");
                if (r.status() == 204 || r.json().path("messages").isEmpty()) {
                    break;
                }
                r.json().path("messages").forEach(m -> stored.merge(m.path("data").path("key").asText(), 1, Integer::sum));
            }
            assertEquals(pushed, stored.keySet(), "what was acknowledged is what is stored");
            assertTrue(stored.values().stream().allMatch(c -> c == 1), "each key stored once: " + stored);
            System.out.println("consumer outage: " + pushed.size() + " pushes acknowledged, "
                    + acked.size() + " acked by the group (" + acked.values().stream().filter(c -> c > 1).count()
                    + " acked again after a redelivery), " + longPollMillis.size() + " pops");
        }
    }
}
