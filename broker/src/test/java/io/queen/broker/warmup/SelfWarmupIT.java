package io.queen.broker.warmup;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.WarmupSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.CapturedLog;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up before readiness on a real broker and PostgreSQL: /health answers at once, /ready
 * only once the warm-up pushed and consumed its messages (or ran out of time), and the warm-up's
 * queue is gone afterwards.
 */
class SelfWarmupIT {

    @Test
    void readyOnlyOnceTheWarmUpPushedAndConsumedItsMessagesAndItsQueueIsGone() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup");
        try (CapturedLog log = CapturedLog.of(SelfWarmup.class);
             Broker broker = BrokerFixture.start(db, Map.of("QUEEN_WARMUP_MESSAGES", "3000"))) {
            HttpProbe http = new HttpProbe(broker.port());
            assertEquals(200, http.get("/health").status(), "the database answers from the start");
            await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
            assertTrue(log.contains("warm-up done: 3,000 messages pushed and 3,000 consumed"), log.messages().toString());
            HttpProbe.Reply queues = http.get("/api/v1/resources/queues");
            assertEquals(200, queues.status());
            assertFalse(queues.body().contains("queen-warmup"), "the warm-up queue is deleted: " + queues.body());
        }
    }

    @Test
    void notReadyWhileWarmingAndReadyWhenItsTimeIsUp() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_deadline");
        try (CapturedLog log = CapturedLog.of(SelfWarmup.class);
             Broker broker = BrokerFixture.start(db, Map.of("QUEEN_WARMUP_MESSAGES", "100000000",
                     "QUEEN_WARMUP_MAX_SECONDS", "3"))) {
            HttpProbe http = new HttpProbe(broker.port());
            HttpProbe.Reply warming = http.get("/ready");
            assertEquals(503, warming.status(), warming.body());
            assertEquals("warming", warming.json().path("status").asText());
            assertEquals(200, http.get("/health").status());
            await().atMost(Duration.ofSeconds(30)).until(() -> http.get("/ready").status() == 200);
            assertTrue(log.contains("warm-up done:"), log.messages().toString());
            assertFalse(http.get("/api/v1/resources/queues").body().contains("queen-warmup"));
        }
    }

    @Test
    void theHookRunsOnceWhenTheTrafficIsOverAndBeforeReady() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_hook");
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            AtomicInteger runs = new AtomicInteger();
            AtomicReference<SelfWarmup> warmup = new AtomicReference<>();
            AtomicBoolean readyDuringHook = new AtomicBoolean(true);
            CountDownLatch started = new CountDownLatch(1);
            warmup.set(SelfWarmup.start(new WarmupSettings(1_000, 30), null, null, "127.0.0.1", broker.port(), () -> {
                awaitQuietly(started);
                readyDuringHook.set(warmup.get().ready());
                runs.incrementAndGet();
            }));
            try {
                started.countDown();
                await().atMost(Duration.ofSeconds(60)).until(() -> warmup.get().ready());
                assertEquals(1, runs.get());
                assertFalse(readyDuringHook.get(), "the hook ran before the warm-up reported ready");
            } finally {
                warmup.get().close();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void withoutAWarmUpReadyAtOnce() {
        DatabaseSettings db = TestPostgres.freshDatabase("self_warmup_none");
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            assertEquals(200, new HttpProbe(broker.port()).get("/ready").status());
        }
    }
}
