package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.Tenants;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two "brokers" (a hub and a channel each) on one database. */
class PgWakeChannelIT {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-0000000000aa");

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private DatabaseSettings db;
    private WakeHub hubA;
    private WakeHub hubB;
    private PgWakeChannel channelA;
    private PgWakeChannel channelB;

    @BeforeEach
    void twoBrokers() {
        db = TestPostgres.freshDatabase("wake_channel");
        hubA = new WakeHub();
        hubB = new WakeHub();
        channelA = new PgWakeChannel(db, hubA, "broker-a");
        channelB = new PgWakeChannel(db, hubB, "broker-b");
        awaitListening(channelA, 1);
        awaitListening(channelB, 1);
    }

    @AfterEach
    void close() {
        channelA.close();
        channelB.close();
        threads.shutdownNow();
    }

    private static void awaitListening(PgWakeChannel channel, long sessions) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> channel.listening() && channel.listenSessions() >= sessions);
    }

    private record Parked(CompletableFuture<Boolean> woken, long startNanos) {
        long elapsedMillis() {
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        }
    }

    private Parked parkOn(WakeHub hub, String queue) {
        long seen = hub.version(TENANT, queue);
        long start = System.nanoTime();
        var woken = CompletableFuture.supplyAsync(() -> hub.awaitChange(TENANT, queue, seen, 30_000), threads);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> hub.waiting() == 1);
        return new Parked(woken, start);
    }

    private static void assertWokenWithin5s(Parked p) throws Exception {
        assertTrue(p.woken().get(30, TimeUnit.SECONDS), "the waiter timed out instead of being woken");
        // A correctness bound (the wake came through the channel, not the 30 s timeout), not a benchmark.
        assertTrue(p.elapsedMillis() < 5_000, "woken after " + p.elapsedMillis() + " ms");
    }

    @Test
    void aPushOnOneBrokerWakesAPopParkedOnTheOther() throws Exception {
        var ringOnB = hubB.hotList().ring(TENANT, "orders", "__QUEUE_MODE__");
        Parked onB = parkOn(hubB, "orders");
        channelA.published(TENANT, "orders", "p1");
        assertWokenWithin5s(onB);
        assertEquals(List.of("p1"), ringOnB.take(10), "the peer's push is marked in B's hot list");
        // A counts a NOTIFY once its round trip returns; PostgreSQL may deliver it to B before that.
        await().atMost(Duration.ofSeconds(5)).until(() -> channelA.notificationsSent() >= 1);
        assertEquals(1, channelB.notificationsReceived());
        // A broker ignores its own notifications.
        assertEquals(0, channelA.notificationsReceived());
    }

    @Test
    void aBrokerAloneSendsNothingAndSendsAgainOnceAPeerListens() throws Exception {
        channelB.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> wakeListeners() == 1);
        // A re-asks at most once a second whether anyone else listens; keep publishing until it knows.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
            channelA.published(TENANT, "solo", "p");
            return channelA.ticksUnsentAlone() > 0;
        });
        long sent = channelA.notificationsSent();
        long unsent = channelA.ticksUnsentAlone();
        for (int i = 0; i < 20; i++) {
            long ticks = channelA.ticksUnsentAlone();
            channelA.published(TENANT, "solo", "p" + i);
            // One publish per tick: each is followed by a tick that found nobody to tell.
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(2))
                    .until(() -> channelA.ticksUnsentAlone() > ticks);
        }
        assertEquals(sent, channelA.notificationsSent(), "NOTIFYs sent with no other broker listening");
        assertTrue(channelA.ticksUnsentAlone() >= unsent + 20, "ticks unsent: " + (channelA.ticksUnsentAlone() - unsent));

        WakeHub hubC = new WakeHub();
        try (PgWakeChannel channelC = new PgWakeChannel(db, hubC, "broker-c")) {
            awaitListening(channelC, 1);
            Parked onC = parkOn(hubC, "solo");
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
                channelA.published(TENANT, "solo", "p");
                return onC.woken().isDone();
            });
            assertTrue(onC.woken().get(), "the new peer was woken by A's NOTIFY");
            assertTrue(channelC.notificationsReceived() >= 1);
        }
    }

    private long wakeListeners() throws SQLException {
        try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = '" + db.database()
                     + "' AND application_name LIKE 'queen-wake-listener%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aQueueConfiguredOnOneBrokerIsDroppedFromTheOthersCaches() throws Exception {
        var onB = new java.util.concurrent.LinkedBlockingQueue<String>();
        var onA = new java.util.concurrent.LinkedBlockingQueue<String>();
        channelB.onQueueChanged((tenant, queue) -> onB.add(tenant + "/" + queue));
        channelA.onQueueChanged((tenant, queue) -> onA.add(tenant + "/" + queue));
        channelA.queueChanged(TENANT, "orders");
        channelA.queueChanged(TENANT, "é-queue");
        List<String> heard = new java.util.ArrayList<>();
        heard.add(onB.poll(5, TimeUnit.SECONDS));
        heard.add(onB.poll(5, TimeUnit.SECONDS));
        assertEquals(java.util.Set.of(TENANT + "/orders", TENANT + "/é-queue"), java.util.Set.copyOf(heard));
        // PostgreSQL delivers notifications in commit order, so A's listener has had its own echo
        // (committed before B heard it) by the time it hears B's NOTIFY sent after that.
        channelB.published(TENANT, "after-the-echo", "p");
        await().atMost(Duration.ofSeconds(5)).until(() -> channelA.notificationsReceived() >= 1);
        assertTrue(onA.isEmpty(), "a broker does not act on its own announcements");
    }

    @Test
    void theLocalHubIsSignalledAtOnce() throws Exception {
        Parked onA = parkOn(hubA, "orders");
        channelA.published(TENANT, "orders", "p1");
        assertWokenWithin5s(onA);
    }

    @Test
    void aBusyQueueIsCoalescedIntoFarFewerNotifications() throws Exception {
        Parked onB = parkOn(hubB, "busy");
        long before = channelA.notificationsSent();
        for (int i = 0; i < 10_000; i++) {
            channelA.published(TENANT, "busy", "p" + (i % 8));
        }
        assertWokenWithin5s(onB);
        // Let the last tick go out before counting.
        await().atMost(Duration.ofSeconds(5)).pollDelay(Duration.ofMillis(50))
                .until(() -> channelA.notificationsSent() == channelB.notificationsReceived());
        long sent = channelA.notificationsSent() - before;
        assertTrue(sent > 0 && sent < 1_000, "sent " + sent + " NOTIFYs for 10000 pushes");
        assertEquals(0, channelA.notificationsReceived(), "A hears its own NOTIFYs and drops them uncounted");
        long heard = channelB.notificationsReceived();
        channelB.deliver("{\"from\":\"broker-a\",\"keys\":[]}");
        assertEquals(heard + 1, channelB.notificationsReceived(), "a peer's payload is counted");
        channelB.deliver("{\"from\":\"broker-b\",\"keys\":[]}");
        channelB.deliver("{\"keys\":[],\"from\":\"broker-b\"}");
        assertEquals(heard + 1, channelB.notificationsReceived(), "own payloads are not, however they are spelled");
    }

    @Test
    void manyPartitionsAreSplitIntoPayloadsUnderTheNotifyLimit() throws Exception {
        Parked onB = parkOn(hubB, "wide");
        for (int q = 0; q < 400; q++) {
            channelA.published(TENANT, "queue-with-a-longish-name-" + q, "partition-" + q);
        }
        channelA.published(TENANT, "wide", "p");
        assertWokenWithin5s(onB);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> channelB.notificationsReceived() == channelA.notificationsSent());
        assertTrue(channelA.notificationsSent() >= 2, "sent " + channelA.notificationsSent());
    }

    @Test
    void morePartitionsThanOneTickNamesMakeThePeersRingScan() throws Exception {
        var ringOnB = hubB.hotList().ring(TENANT, "wide-queue", "__QUEUE_MODE__");
        ringOnB.endScan(ringOnB.scanEpoch(), List.of(), false, false);
        assertFalse(ringOnB.needsScan());
        Parked onB = parkOn(hubB, "wide-queue");
        for (int p = 0; p < 500; p++) {
            channelA.published(TENANT, "wide-queue", "p" + p);
        }
        assertWokenWithin5s(onB);
        await().atMost(Duration.ofSeconds(5)).until(ringOnB::needsScan);
        assertTrue(ringOnB.size() <= 500, "ring holds " + ringOnB.size());
    }

    private static HttpProbe.Reply ackFirstMessage(HttpProbe http, JsonNode pop) {
        JsonNode m = pop.get("messages").get(0);
        return http.post("/api/v1/ack/batch", "{\"acknowledgments\":[{\"transactionId\":\""
                + m.get("transactionId").asText() + "\",\"partitionId\":\"" + pop.get("partitionId").asText()
                + "\",\"leaseId\":\"" + pop.get("leaseId").asText() + "\"}]}");
    }

    /**
     * Returns once B's listener has applied everything the broker behind {@code http} published
     * before this call. Two pushes, each awaited on B: PostgreSQL delivers notifications in commit
     * order and B's listener applies them one at a time, so when the second push's mark is in B's
     * ring the payload that carried the first (and whatever shared it) has been applied whole.
     */
    private void awaitEverythingPublishedSoFarOnB(HttpProbe http) {
        var markers = hubB.hotList().ring(Tenants.DEFAULT, "marker", Tenants.QUEUE_MODE);
        for (String partition : List.of("m1", "m2")) {
            int before = markers.size();
            assertEquals(201, http.push("marker", partition, "1").status());
            await().atMost(Duration.ofSeconds(5)).until(() -> markers.size() > before);
        }
    }

    @Test
    void anAckReleasingALeaseWithMessagesBehindItMarksAPeersRing() throws Exception {
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            var ringOnB = hubB.hotList().ring(Tenants.DEFAULT, "released", Tenants.QUEUE_MODE);
            assertEquals(201, http.push("released", "p", "1", "2").status());
            JsonNode first = http.get("/api/v1/pop/queue/released?batch=1").json();
            await().atMost(Duration.ofSeconds(5)).until(() -> ringOnB.size() == 1); // the push's mark
            ringOnB.take(10);
            // Acking message 1 releases the lease with message 2 behind it: claimable again, on every broker.
            assertEquals(200, ackFirstMessage(http, first).status());
            await().atMost(Duration.ofSeconds(5)).until(() -> ringOnB.size() == 1);
            assertEquals(List.of("p"), ringOnB.take(10));
            // Acking the last one leaves nothing behind the cursor: no mark.
            JsonNode second = http.get("/api/v1/pop/queue/released?batch=1").json();
            assertEquals(200, ackFirstMessage(http, second).status());
            long sent = channelB.notificationsReceived();
            awaitEverythingPublishedSoFarOnB(http);
            assertEquals(0, ringOnB.size(), "a drained partition is not marked (" + (channelB.notificationsReceived()
                    - sent) + " notifications after the last ack)");
        }
    }

    @Test
    void aMalformedPayloadIsSkippedAndTheListenerCarriesOn() throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement()) {
            st.execute("SELECT pg_notify('queen_wake', 'not json'), pg_notify('queen_wake', '{\"from\":\"x\",\"keys\":[[1]]}')");
        }
        Parked onB = parkOn(hubB, "orders");
        channelA.published(TENANT, "orders", "p1");
        assertWokenWithin5s(onB);
    }

    @Test
    void bothChannelsRecoverAfterTheirConnectionsAreKilled() throws Exception {
        // Warm the sender connections so there is something to kill on both sides.
        channelA.published(TENANT, "warm", "p");
        channelB.published(TENANT, "warm", "p");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> channelA.notificationsReceived() == 1 && channelB.notificationsReceived() == 1);

        long sessionsA = channelA.listenSessions();
        long sessionsB = channelB.listenSessions();
        assertTrue(terminateWakeConnections() >= 4, "expected sender and listener of both brokers");
        awaitListening(channelA, sessionsA + 1);
        awaitListening(channelB, sessionsB + 1);

        // Parked after the reconnect, so only the new publish (not the reconnect's wake-all) can wake it.
        Parked onB = parkOn(hubB, "orders");
        channelA.published(TENANT, "orders", "p1");
        assertWokenWithin5s(onB);

        Parked onA = parkOn(hubA, "orders");
        channelB.published(TENANT, "orders", "p2");
        assertWokenWithin5s(onA);
    }

    @Test
    void aListenerReconnectWakesEveryParkedPop() throws Exception {
        Parked onB = parkOn(hubB, "quiet");
        long sessionsB = channelB.listenSessions();
        terminateWakeConnections();
        awaitListening(channelB, sessionsB + 1);
        assertWokenWithin5s(onB);
    }

    private int terminateWakeConnections() throws SQLException {
        try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                     + " WHERE datname = '" + db.database() + "' AND application_name LIKE 'queen-wake-%'")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
