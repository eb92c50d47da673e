package io.queen.broker.engine;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.store.Database;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A push flush can fail after its rows committed (the connection broke after the commit, or the
 * driver failed reading the answer), and the fusion then retries its requests one by one. The
 * retry must neither answer the items as duplicates of themselves (a client would be told its
 * message was refused while it is stored) nor store a second copy of items that carry no client
 * transactionId. Real PostgreSQL and the real writer; the "committed, answer lost" first attempt is
 * a write whose answer the test discards.
 */
class UncertainRetryIT {
    private static final UUID TENANT = Tenants.DEFAULT;

    private static List<PushService.Item> items(String queue, int n) {
        List<PushService.Item> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new PushService.Item(queue, "p" + (i % 2), ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8),
                    i % 2 == 0 ? queue + "-txn-" + i : null, null));
        }
        return out;
    }

    private static List<PushService.Result> write(Database database, PartitionWriter writer,
                                                  List<PushService.Item> items, boolean retryingUncertain)
            throws Exception {
        PushPlan plan = PushPlan.of(items);
        PartitionWriter.Batch batch = new PartitionWriter.Batch();
        batch.retryingUncertain = retryingUncertain;
        try (Connection c = database.connection()) {
            c.setAutoCommit(false);
            writer.provision(c, TENANT, plan.groups());
            batch.add(plan.groups());
            writer.writePartitions(c, batch, false);
            c.commit();
            batch.committed();
        }
        return plan.results(items);
    }

    private static long stored(DatabaseSettings db, String queue) throws SQLException {
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT coalesce(sum(lp.last_offset + 1), 0) FROM queen.log_partitions lp"
                     + " JOIN queen.queues q ON q.id = lp.queue_id WHERE q.name = ?")) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void aRetryOfItemsThatCommittedAnswersThemQueuedAndStoresNothingTwice() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("uncertain_retry");
        try (Broker broker = BrokerFixture.start(db, Map.of()); Database database = Database.open(db)) {
            HttpProbe http = new HttpProbe(broker.port());
            HttpProbe.Reply configured = http.post("/api/v1/configure",
                    "{\"queue\":\"nodedup\",\"options\":{\"dedupWindowSeconds\":0}}");
            assertTrue(configured.status() / 100 == 2, configured.body());
            // The SQL probe alone (no cache), the dedup cache, and a queue whose dedup is off.
            record Case(String queue, long cacheEntries) {
            }
            for (Case k : List.of(new Case("sqlprobe", 0), new Case("cached", 100_000), new Case("nodedup", 100_000))) {
                PartitionWriter writer = new PartitionWriter(PayloadCipher.disabled(), 3, k.cacheEntries());
                List<PushService.Item> request = items(k.queue(), 8);
                List<PushService.Result> first = write(database, writer, request, false);
                first.forEach(r -> assertEquals("queued", r.status(), k.queue()));

                List<PushService.Result> retried = write(database, writer, request, true);
                for (int i = 0; i < request.size(); i++) {
                    assertEquals("queued", retried.get(i).status(), k.queue() + " item " + i);
                    assertEquals(request.get(i).messageId(), retried.get(i).messageId(), k.queue() + " item " + i);
                }
                assertEquals(8, stored(db, k.queue()), k.queue() + ": each item once");

                // Another item reusing a stored client transactionId is still a duplicate of the original.
                PushService.Item reuse = new PushService.Item(k.queue(), "p0", "{}".getBytes(StandardCharsets.UTF_8),
                        k.queue() + "-txn-0", null);
                PushService.Result again = write(database, writer, List.of(reuse), false).get(0);
                if (k.queue().equals("nodedup")) {
                    assertEquals("queued", again.status(), "dedup off: a reused transactionId is a new message");
                } else {
                    assertEquals("duplicate", again.status(), k.queue());
                    assertEquals(request.get(0).messageId(), again.messageId(), k.queue());
                }
            }
        }
    }
}
