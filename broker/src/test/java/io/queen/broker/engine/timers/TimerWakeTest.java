package io.queen.broker.engine.timers;

import io.queen.broker.lifecycle.ManualTicker;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sweeper's sleep on a clock the test moves: it ends on a ring or when the clock reaches it. */
class TimerWakeTest {
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private final ManualTicker ticker = new ManualTicker();
    private final TimerWake wake = new TimerWake(ticker);

    private CompletableFuture<Boolean> sleeping(long seen, long ms) {
        CompletableFuture<Boolean> done = CompletableFuture.supplyAsync(() -> wake.await(seen, ms));
        await("the sweeper sleeps on the ticker").atMost(PATIENCE).until(() -> ticker.waiting() == 1 || done.isDone());
        return done;
    }

    @Test
    void aRingEndsTheSleepWithoutTheClockMoving() throws Exception {
        long seen = wake.version();
        CompletableFuture<Boolean> done = sleeping(seen, 60_000);
        assertFalse(done.isDone(), "asleep until something happens");
        wake.ring();
        assertTrue(done.get(10, TimeUnit.SECONDS));
        assertEquals(seen + 1, wake.version());
    }

    @Test
    void theSleepEndsWhenTheClockReachesItsEndAndNotBefore() throws Exception {
        CompletableFuture<Boolean> done = sleeping(wake.version(), 1_000);
        long begun = ticker.waitsBegun();
        ticker.advance(Duration.ofMillis(999));
        await("woken short of its end, it sleeps again").atMost(PATIENCE)
                .until(() -> ticker.waitsBegun() > begun || done.isDone());
        assertFalse(done.isDone(), "1 ms short of a 1000 ms sleep");
        ticker.advance(Duration.ofMillis(1));
        assertTrue(done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aRingAlreadyHeardDoesNotSleepAtAll() {
        long seen = wake.version();
        wake.ring();
        assertTrue(wake.await(seen, 60_000), "a ring after seen, before the call");
        assertEquals(0, ticker.waitsBegun());
        assertTrue(wake.await(wake.version(), 0), "a zero sleep returns at once");
        assertEquals(0, ticker.waitsBegun());
    }

    @Test
    void anInterruptEndsTheSleepWithFalse() throws Exception {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> result.complete(wake.await(wake.version(), 60_000)));
        await().atMost(PATIENCE).until(() -> ticker.waiting() == 1);
        t.interrupt();
        assertFalse(result.get(10, TimeUnit.SECONDS));
        t.join();
    }
}
