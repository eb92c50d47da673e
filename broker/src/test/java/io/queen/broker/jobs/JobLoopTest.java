package io.queen.broker.jobs;

import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.lifecycle.ManualTicker;
import io.queen.broker.support.CapturedLog;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobLoopTest {
    static {
        // The failures below are on purpose; keep the test output readable.
        Logger.getLogger(JobLoop.class.getName()).setLevel(Level.OFF);
    }

    /** Counts claims and releases; can be told to fail claims. */
    static final class CountingTurn implements Turn {
        final AtomicInteger claims = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        volatile int failClaims;

        @Override
        public Long claim() {
            if (failClaims > 0) {
                failClaims--;
                throw new IllegalStateException("database away");
            }
            return (long) claims.incrementAndGet();
        }

        @Override
        public void release(long token, long elapsedMs) {
            releases.incrementAndGet();
        }
    }

    @Test
    void aCycleThatThrowsKeepsItsSchedule() {
        CountingTurn turn = new CountingTurn();
        AtomicInteger calls = new AtomicInteger();
        Cycle cycle = () -> {
            int n = calls.incrementAndGet();
            if (n == 1) {
                throw new java.sql.SQLException("statement timeout", "57014");
            }
            if (n == 2) {
                throw new StackOverflowError("a bug, not a reason to stop maintenance");
            }
            return Cycle.Outcome.idle("fine");
        };
        BrokerMetrics metrics = new BrokerMetrics();
        try (JobLoop loop = new JobLoop("throws", 5, turn, cycle, metrics).start()) {
            await().atMost(10, TimeUnit.SECONDS).until(() -> calls.get() >= 5);
            assertEquals(2, loop.failures());
        }
        // The failures are what a scrape reads: counted under the job's name, beside its runs.
        BrokerMetrics.CycleCount counted = metrics.cycles().get("throws");
        assertEquals(2, counted.failures());
        assertTrue(counted.runs() >= 5, counted.toString());
        // Every claimed turn was released, the failed ones included.
        assertEquals(turn.claims.get(), turn.releases.get());
    }

    @Test
    void aFailedClaimIsRetriedAtTheNextTick() {
        CountingTurn turn = new CountingTurn();
        turn.failClaims = 3;
        AtomicInteger calls = new AtomicInteger();
        try (JobLoop loop = new JobLoop("claims", 5, turn, () -> {
            calls.incrementAndGet();
            return null;
        }, new BrokerMetrics()).start()) {
            await().atMost(10, TimeUnit.SECONDS).until(() -> calls.get() >= 2);
            assertEquals(0, loop.failures());
        }
    }

    @Test
    void repeatedFailuresAreLoggedOnceAMinuteWithTheCountLeftOut() {
        ManualTicker ticker = new ManualTicker();
        JobLoop loop = new JobLoop("flaky", 5, new CountingTurn(), () -> {
            throw new SQLException("connection lost", "08006");
        }, new BrokerMetrics(), ticker);
        Logger logger = Logger.getLogger(JobLoop.class.getName());
        Level level = logger.getLevel();
        logger.setLevel(Level.ALL);
        logger.setUseParentHandlers(false);
        try (CapturedLog log = CapturedLog.of(JobLoop.class)) {
            loop.runOnce();
            ticker.advance(Duration.ofSeconds(59));
            loop.runOnce();
            loop.runOnce();
            assertEquals(1, log.records().size(), "inside the minute the failures are only counted");
            ticker.advance(Duration.ofSeconds(1));
            loop.runOnce();
            assertEquals(2, log.records().size(), log.messages().toString());
            assertTrue(log.messages().get(1).endsWith("(2 similar failures not logged)"), log.messages().get(1));
            assertEquals(4, loop.failures());
        } finally {
            logger.setUseParentHandlers(true);
            logger.setLevel(level);
        }
    }

    @Test
    void theTurnIsReleasedWithTheRunsDurationOnTheLoopsTicker() {
        ManualTicker ticker = new ManualTicker();
        AtomicLong released = new AtomicLong(-1);
        Turn turn = new Turn() {
            @Override
            public Long claim() {
                return 1L;
            }

            @Override
            public void release(long token, long elapsedMs) {
                released.set(elapsedMs);
            }
        };
        new JobLoop("timed", 5, turn, () -> {
            ticker.advance(Duration.ofMillis(1_500));
            return null;
        }, new BrokerMetrics(), ticker).runOnce();
        assertEquals(1_500, released.get());
    }

    @Test
    void noTurnMeansNoRun() {
        AtomicInteger calls = new AtomicInteger();
        Turn never = new Turn() {
            @Override
            public Long claim() {
                return null;
            }

            @Override
            public void release(long token, long elapsedMs) {
                throw new AssertionError("nothing to release");
            }
        };
        JobLoop loop = new JobLoop("never", 5, never, () -> {
            calls.incrementAndGet();
            return null;
        }, new BrokerMetrics());
        for (int i = 0; i < 5; i++) {
            loop.runOnce();
        }
        assertEquals(0, calls.get());
        assertEquals(0, loop.runs());
    }

    @Test
    void closeStopsTheThreadPromptly() {
        JobLoop loop = new JobLoop("stops", 60_000, Turn.EVERY_TIME, () -> null, new BrokerMetrics()).start();
        long start = System.nanoTime();
        loop.close();
        assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 5);
        assertNull(Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("queen-job-stops")).findAny().orElse(null));
    }

    @Test
    void ticksAreJitteredWithinAQuarterEitherSide() {
        boolean sawDifferent = false;
        long first = JobLoop.jittered(1_000);
        for (int i = 0; i < 200; i++) {
            long t = JobLoop.jittered(1_000);
            assertTrue(t >= 750 && t <= 1_250, "tick " + t);
            sawDifferent |= t != first;
        }
        assertTrue(sawDifferent);
        assertFalse(JobLoop.jittered(1) < 1);
    }

    @Test
    void theFirstTickComesWithinHalfATickAndNeverLaterThanFiveSeconds() {
        long longest = 0;
        for (int i = 0; i < 500; i++) {
            long minutePoll = JobLoop.firstDelay(60_000);
            assertTrue(minutePoll >= 0 && minutePoll <= 5_000, "first delay " + minutePoll);
            longest = Math.max(longest, minutePoll);
            long shortPoll = JobLoop.firstDelay(400);
            assertTrue(shortPoll >= 0 && shortPoll <= 200, "first delay " + shortPoll);
        }
        assertTrue(longest > 2_500, "the spread is used: longest " + longest);
    }

    @Test
    void leasesOutliveTheirPeriodAndPollsAreATenthOfIt() {
        assertEquals(60_000, LeaseTurn.leaseMs(5_000));
        assertEquals(1_200_000, LeaseTurn.leaseMs(600_000));
        assertEquals(1_800_000, LeaseTurn.leaseMs(3_600_000));
        assertEquals(1_000, LeaseTurn.pollMs(5_000, 1_000));
        assertEquals(60_000, LeaseTurn.pollMs(3_600_000, 1_000));
        assertEquals(40, LeaseTurn.pollMs(400, 20));
    }
}
