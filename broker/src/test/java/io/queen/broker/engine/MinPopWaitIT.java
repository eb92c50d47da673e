package io.queen.broker.engine;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.EngineSettings.AutopilotMode;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The queue option minPopWaitTime: a queue-level long-poll that finds fewer messages than its batch
 * waits up to that long for the batch to fill, then answers once; pops that do not wait, and
 * queues without the option, answer at once.
 */
class MinPopWaitIT {
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("min_pop_wait");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static void configure(String queue, int minPopWaitMs) {
        Reply r = http.post("/api/v1/configure", "{\"queue\":\"" + queue + "\",\"options\":{\"minPopWaitTime\":"
                + minPopWaitMs + "}}");
        assertEquals(200, r.status(), r.body());
    }

    static CompletableFuture<Reply> longPoll(String queue, int batch) {
        return CompletableFuture.supplyAsync(() ->
                http.get("/api/v1/pop/queue/" + queue + "?batch=" + batch + "&wait=true&timeout=20000&autoAck=true"));
    }

    /** What {@link #longPoll} asks for, as the route builds it. */
    static PopService.Request longPollRequest(String queue, int batch) {
        return new PopService.Request(new PopService.Source(Tenants.DEFAULT, queue, null, null, null),
                new PopService.Sizing(batch, true, null, false), new PopService.Delivery(true, 0, true, 20_000),
                new PopService.Subscription(Tenants.QUEUE_MODE, "all", null, null));
    }

    static int messages(Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json().get("messages").size();
    }

    /**
     * The pop runs on a second broker's pop service over the same database, as a peer in the cell
     * would, with a wake hub the test holds: the hub's parked count says when the pop is in the
     * hold, and the test delivers the commit's wake as the peer's wake listener would.
     */
    @Test
    void anUnderFullBatchWaitsForTheRestAndIsAnsweredOnce() throws Exception {
        configure("fill", 5_000);
        http.push("fill", "p", "{\"n\":0}");
        WakeHub hub = new WakeHub();
        QueueCatalog catalog = new QueueCatalog();
        try (Connection c = broker.database().connection()) {
            c.setAutoCommit(true);
            catalog.resolveQueue(c, Tenants.DEFAULT, "fill"); // known to the peer, as after a push through it
        }
        PopService peer = new PopService(broker.database(), catalog, PayloadCipher.disabled(), hub,
                new PopAutopilot(AutopilotMode.OFF, 100));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<PopService.Result> pop = threads.submit(() -> peer.pop(longPollRequest("fill", 10)));
            await().atMost(Duration.ofSeconds(10)).until(() -> hub.waiting() == 1 || pop.isDone());
            assertFalse(pop.isDone(), "one message of ten: the pop holds");
            http.push("fill", "p", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}", "{\"n\":5}", "{\"n\":6}",
                    "{\"n\":7}", "{\"n\":8}", "{\"n\":9}");
            hub.signal(Tenants.DEFAULT, "fill", "p");
            assertEquals(10, pop.get(4, TimeUnit.SECONDS).messages().size(), "answered once the batch filled");
        }
    }

    @Test
    void theHoldEndsAtTheQueuesSettingNotAtThePopsTimeout() throws Exception {
        configure("short", 600);
        http.push("short", "p", "{\"n\":0}");
        long start = System.nanoTime();
        Reply r = longPoll("short", 10).get(10, TimeUnit.SECONDS);
        long heldMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(1, messages(r));
        assertTrue(heldMs >= 500, "held for the queue's 600 ms, was " + heldMs + " ms");
    }

    @Test
    void popsThatDoNotWaitAndQueuesWithoutTheSettingAnswerAtOnce() throws Exception {
        configure("nowait", 30_000);
        http.push("nowait", "p", "{\"n\":0}");
        assertEquals(1, messages(http.get("/api/v1/pop/queue/nowait?batch=10&wait=false")));

        http.push("plain", "p", "{\"n\":0}");
        // With a 20 s long-poll timeout, an answer within 10 s is an answer at once.
        assertEquals(1, messages(longPoll("plain", 10).get(10, TimeUnit.SECONDS)));
    }
}
