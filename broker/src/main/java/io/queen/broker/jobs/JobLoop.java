package io.queen.broker.jobs;

import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Jitter;
import io.queen.broker.lifecycle.Ticker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One background job on a named daemon platform thread: every jittered tick it asks its
 * {@link Turn} whether to run, runs the {@link Cycle}, logs what it did, and always releases the
 * turn. Every failure (claim, cycle or release) is caught and logged, so a schedule never silently
 * dies; repeated failures are logged at most once a minute with a count of the ones left out.
 * Every run, and every failed one, is also counted under the job's name in {@link BrokerMetrics}
 * ({@code queen_background_cycle_runs_total} / {@code _failures_total} on /metrics/prometheus).
 * The jitter (plus or minus a quarter of the tick) keeps replicas from probing in lock-step.
 */
final class JobLoop implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(JobLoop.class.getName());
    private static final long FAILURE_LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The first tick comes within this long of boot, however long the period: a fresh replica's
     *  first retention or stats run should not wait up to half a minute-long poll interval. */
    static final long FIRST_TICK_SPREAD_MS = 5_000;

    private final String name;
    private final long tickMs;
    private final Turn turn;
    private final Cycle cycle;
    private final BrokerMetrics metrics;
    private final Ticker ticker;
    private final Thread thread;
    private final AtomicLong runs = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean stopping;
    private long lastFailureLogNanos;
    private boolean loggedAFailure;
    private long failuresNotLogged;

    JobLoop(String name, long tickMs, Turn turn, Cycle cycle, BrokerMetrics metrics) {
        this(name, tickMs, turn, cycle, metrics, Ticker.SYSTEM);
    }

    /** {@code ticker} times the runs and spaces the failure logs; the ticks themselves sleep for real. */
    JobLoop(String name, long tickMs, Turn turn, Cycle cycle, BrokerMetrics metrics, Ticker ticker) {
        this.name = name;
        this.tickMs = tickMs;
        this.turn = turn;
        this.cycle = cycle;
        this.metrics = metrics;
        this.ticker = ticker;
        metrics.cycleRegistered(name);
        this.thread = BackgroundThread.create("queen-job-" + name, this::loop);
    }

    JobLoop start() {
        thread.start();
        return this;
    }

    /** Cycles that ran to completion, failed or not. */
    long runs() {
        return runs.get();
    }

    long failures() {
        return failures.get();
    }

    String name() {
        return name;
    }

    private void loop() {
        long delay = firstDelay(tickMs);
        while (!stopping && BackgroundThread.pause(delay)) {
            runOnce();
            delay = jittered(tickMs);
        }
        LOG.fine(() -> "job " + name + " stopped after " + runs.get() + " runs");
    }

    /** One tick: claim, run, release. Never throws. */
    void runOnce() {
        Long token;
        try {
            token = turn.claim();
        } catch (Throwable t) {
            failed("could not claim its turn", t);
            return;
        }
        if (token == null) {
            return;
        }
        long start = ticker.nanoTime();
        boolean failedRun = false;
        try {
            Cycle.Outcome outcome = cycle.run();
            long elapsedMs = elapsedMs(start);
            if (outcome != null && outcome.summary() != null) {
                LOG.log(outcome.level(), () -> name + ": " + outcome.summary() + " in " + elapsedMs + " ms");
            }
        } catch (Throwable t) {
            failedRun = true;
            failures.incrementAndGet();
            failed("cycle failed after " + elapsedMs(start) + " ms", t);
        } finally {
            runs.incrementAndGet();
            metrics.cycleRan(name, failedRun);
            try {
                turn.release(token, elapsedMs(start));
            } catch (Throwable t) {
                failed("could not release its turn", t);
            }
        }
    }

    private void failed(String what, Throwable t) {
        if (stopping) {
            return; // The pool may already be closing under us.
        }
        long now = ticker.nanoTime();
        if (loggedAFailure && now - lastFailureLogNanos < FAILURE_LOG_EVERY_NANOS) {
            failuresNotLogged++;
            return;
        }
        long skipped = failuresNotLogged;
        failuresNotLogged = 0;
        lastFailureLogNanos = now;
        loggedAFailure = true;
        Level level = t instanceof Error ? Level.SEVERE : Level.WARNING;
        LOG.log(level, "job " + name + " " + what + "; it runs again at its next turn"
                + (skipped > 0 ? " (" + skipped + " similar failures not logged)" : ""), t);
    }

    private long elapsedMs(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - startNanos);
    }

    /** A first short, random delay de-phases replicas that boot together. */
    static long firstDelay(long tickMs) {
        return ThreadLocalRandom.current().nextLong(Math.clamp(tickMs / 2, 1, FIRST_TICK_SPREAD_MS) + 1);
    }

    static long jittered(long ms) {
        return Jitter.spread(ms, 0.25);
    }

    /** Asks the loop to stop after its current run, without waiting. */
    void signalStop() {
        stopping = true;
        thread.interrupt();
    }

    /** Stops after the current run; waits a bounded time for it. */
    @Override
    public void close() {
        stopping = true;
        BackgroundThread.stop(thread, Duration.ofSeconds(10), "running its cycle");
    }
}
