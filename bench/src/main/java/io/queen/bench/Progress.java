package io.queen.bench;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Prints "phase: done/target messages" every few seconds while a phase runs. */
final class Progress implements AutoCloseable {
    private static final long PERIOD_SECONDS = 3;

    private final String phase;
    private final long target;
    private final AtomicLong done = new AtomicLong();
    private final ScheduledExecutorService timer;
    private long lastDone;

    Progress(String phase, long target) {
        this(phase, target, true);
    }

    private Progress(String phase, long target, boolean printing) {
        this.phase = phase;
        this.target = target;
        this.timer = printing ? Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-progress");
            t.setDaemon(true);
            return t;
        }) : null;
        if (timer != null) {
            timer.scheduleAtFixedRate(this::print, PERIOD_SECONDS, PERIOD_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** A counter that prints nothing, for the side of a phase that another Progress already reports. */
    static Progress silent() {
        return new Progress("", 0, false);
    }

    void add(long messages) {
        done.addAndGet(messages);
    }

    /** Messages counted so far. */
    long done() {
        return done.get();
    }

    private void print() {
        long now = done.get();
        System.out.printf("  %-24s %,10d / %,d messages  (%,.0f msg/s)%n", phase, now, target,
                (now - lastDone) / (double) PERIOD_SECONDS);
        System.out.flush();
        lastDone = now;
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
