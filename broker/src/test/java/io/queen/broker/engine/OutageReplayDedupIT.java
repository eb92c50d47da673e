package io.queen.broker.engine;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.store.Database;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The partial commit an outage can leave: a push spanning several partitions commits some of them
 * (or commits all and loses the answer) before its connection breaks, and the route spools every
 * item. Replaying those items must store no second copy: each is replayed with the message id and
 * transactionId of its first attempt, with or without a client transactionId. Real PostgreSQL, the
 * real push path and spool; the "committed before the break" half is a push that succeeded.
 */
class OutageReplayDedupIT {
    private static final UUID TENANT = Tenants.DEFAULT;

    @TempDir
    Path spoolDir;

    private static PushService.Item item(String partition, String txn, int n) {
        return new PushService.Item("partial", partition, ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8),
                txn, null);
    }

    @Test
    void itemsThatCommittedBeforeTheBreakAreFoundOnReplayAndTheRestAreStoredOnce() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("outage_replay_dedup");
        try (Broker broker = BrokerFixture.start(db, Map.of()); Database database = Database.open(db)) {
            PushService push = new PushService(database, new QueueCatalog(), PayloadCipher.disabled(),
                    CommitListener.NONE, 3, 0);
            // One request over three partitions, half the items without a client transactionId.
            List<PushService.Item> request = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                request.add(item("p" + (i % 3), i % 2 == 0 ? "txn-" + i : null, i));
            }
            // Partitions p0 and p1 committed before the connection broke; p2 did not.
            List<PushService.Item> committed = request.stream().filter(it -> !it.partition().equals("p2")).toList();
            List<PushService.Result> first = push.push(TENANT, committed);
            first.forEach(r -> assertEquals("queued", r.status()));

            List<PushService.Result> replayed = new CopyOnWriteArrayList<>();
            PushSpool spool = new PushSpool(new MaintenanceSettings(spoolDir, 10, 5, 1000, 1000),
                    (tenant, items) -> {
                        List<PushService.Result> r = push.push(tenant, items);
                        replayed.addAll(r);
                        return r;
                    }, () -> false);
            List<PushService.Result> answered = spool.bufferDuringOutage(TENANT, request,
                    new SQLTransientConnectionException("connection lost mid-push"));
            answered.forEach(r -> assertEquals("buffered", r.status()));
            assertEquals(12, spool.drain(Long.MAX_VALUE));
            spool.close();

            // The committed items are found under their own message ids: queued (by the first attempt), not
            // duplicates of themselves; p2's are stored now.
            List<String> statuses = replayed.stream().map(PushService.Result::status).toList();
            assertEquals(12, statuses.stream().filter("queued"::equals).count(), "replayed: " + statuses);

            // Each item once, under the id the client was answered with.
            HttpProbe http = new HttpProbe(broker.port());
            Map<String, String> stored = new java.util.HashMap<>();
            while (true) {
                HttpProbe.Reply r = http.get("/api/v1/pop/queue/partial?batch=100&partitions=10&autoAck=true");
                if (r.status() == 204) {
                    break;
                }
                assertEquals(200, r.status(), r.body());
                r.json().get("messages").forEach(m -> {
                    String previous = stored.put(m.get("id").asText(), m.get("transactionId").asText());
                    assertEquals(null, previous, "delivered twice: " + m);
                });
            }
            assertEquals(12, stored.size(), "stored: " + stored);
            for (PushService.Result r : answered) {
                assertEquals(r.transactionId(), stored.get(r.messageId().toString()), "item " + r.index());
            }
        }
    }
}
