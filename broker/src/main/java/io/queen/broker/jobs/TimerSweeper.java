package io.queen.broker.jobs;

import io.queen.broker.config.TimerSettings;
import io.queen.broker.engine.TimerFire;
import io.queen.broker.engine.timers.TimerWake;
import io.queen.broker.lifecycle.BackgroundThread;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The sweeper's timer fire as a background loop (broker/DESIGN.md, Timers): on every broker unless
 * QUEEN_SWEEPER=false, leaderless (no lease turn, no advisory lock: brokers share due timers through
 * the claim's SKIP LOCKED). Its pause follows what the pass found: the floor while it fires, until
 * the next due timer (within 5 ms..1 s) while timers are pending, a jittered 25..200 ms when another
 * broker took the due rows, and a backoff doubling up to QUEEN_SWEEPER_IDLE_MAX_SLEEP_MS with no
 * timer at all. A local schedule rings it awake at once; a failing pass is logged and the loop goes on.
 */
public final class TimerSweeper implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TimerSweeper.class.getName());
    /** Idle passes at the normal ceiling before the idle backoff starts doubling. */
    private static final int IDLE_AFTER = 5;

    private final TimerFire fire;
    private final TimerWake wake;
    private final TimerSettings settings;
    private volatile boolean running = true;
    private final Thread thread;
    private long lastFailureLog;

    private TimerSweeper(TimerFire fire, TimerWake wake, TimerSettings settings) {
        this.fire = fire;
        this.wake = wake;
        this.settings = settings;
        this.thread = BackgroundThread.create("queen-timer-sweeper", this::loop);
    }

    /** Starts the loop, or returns null when QUEEN_SWEEPER=false. */
    public static TimerSweeper start(TimerFire fire, TimerWake wake, TimerSettings settings) {
        if (!settings.sweeper()) {
            LOG.info("QUEEN_SWEEPER=false: this broker fires no timers (others sharing the database do)");
            return null;
        }
        TimerSweeper s = new TimerSweeper(fire, wake, settings);
        s.thread.start();
        return s;
    }

    private void loop() {
        int idle = 0;
        while (running) {
            long seen = wake.version();
            long sleep;
            try {
                TimerFire.Pass pass = fire.sweep();
                idle = pass instanceof TimerFire.Empty || pass instanceof TimerFire.Off ? idle + 1 : 0;
                sleep = sleepAfter(pass, idle);
            } catch (Exception e) {
                sleep = settings.maxSleepMs();
                long now = System.currentTimeMillis();
                if (now - lastFailureLog > 10_000) {
                    lastFailureLog = now;
                    LOG.log(Level.WARNING, "timer sweep failed; retrying in " + sleep + " ms", e);
                }
            }
            if (!running || !wake.await(seen, sleep)) {
                return;
            }
        }
    }

    long sleepAfter(TimerFire.Pass pass, int idle) {
        long min = settings.minSleepMs();
        long max = settings.maxSleepMs();
        return switch (pass) {
            case TimerFire.Fired f -> min;
            case TimerFire.DueIn d -> Math.clamp(d.ms(), min, max);
            case TimerFire.Contended c -> Math.clamp(25 + ThreadLocalRandom.current().nextLong(176), min, max);
            case TimerFire.Off o -> max;
            case TimerFire.Empty e -> idle <= IDLE_AFTER ? max
                    : Math.min(settings.idleMaxSleepMs(), max << Math.min(idle - IDLE_AFTER, 20));
        };
    }

    @Override
    public void close() {
        running = false;
        BackgroundThread.stop(thread, Duration.ofSeconds(5), "a timer fire in flight");
    }
}
