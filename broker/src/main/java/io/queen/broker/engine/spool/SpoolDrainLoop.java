package io.queen.broker.engine.spool;

import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The named background thread that drains the spool: every FILE_BUFFER_FLUSH_MS while push
 * maintenance is off and items wait, and with backoff while the database is unavailable, so
 * its replays are the probe that tells when the database is back.
 */
public final class SpoolDrainLoop {
    private static final Logger LOG = Logger.getLogger(SpoolDrainLoop.class.getName());
    private static final long MAX_BACKOFF_MS = 5_000;

    private final SpoolReplayer replayer;
    private final SpoolWriter writer;
    private final SpoolState state;
    private final BooleanSupplier paused;
    private final long idleMs;
    private final SpoolDirectory directory;

    private volatile boolean running;
    private Thread thread;

    public SpoolDrainLoop(SpoolReplayer replayer, SpoolWriter writer, SpoolState state, BooleanSupplier paused,
                          long idleMs, SpoolDirectory directory) {
        this.replayer = replayer;
        this.writer = writer;
        this.state = state;
        this.paused = paused;
        this.idleMs = idleMs;
        this.directory = directory;
    }

    public synchronized void start() {
        if (thread != null) {
            return;
        }
        running = true;
        thread = BackgroundThread.start("queen-spool-drain", this::run);
    }

    /** Stops the loop, waiting a bounded time for a replay in flight. */
    public synchronized void stop() {
        running = false;
        BackgroundThread.stop(thread, Duration.ofSeconds(10), "replaying spooled pushes");
        thread = null;
    }

    private void run() {
        Backoff backoff = new Backoff(Math.max(idleMs, 100), MAX_BACKOFF_MS, 0.25);
        long wait = idleMs;
        boolean announced = false;
        while (running && BackgroundThread.pause(wait)) {
            wait = idleMs;
            try {
                if (paused.getAsBoolean() || !hasWork()) {
                    backoff.reset();
                    announced = false;
                    continue;
                }
                if (!announced) {
                    LOG.info("push spool: draining " + state.pending() + " items from " + directory.path());
                    announced = true;
                }
                long before = state.pending();
                replayer.drain(Long.MAX_VALUE);
                if (state.pending() > 0 && !state.databaseHealthy()) {
                    wait = backoff.next();
                } else {
                    backoff.reset();
                    if (state.pending() == 0 && before > 0) {
                        LOG.info("push spool: drained");
                    }
                }
            } catch (RuntimeException e) {
                wait = backoff.next();
                LOG.log(Level.SEVERE, "push spool drain failed; retrying in " + wait + " ms", e);
            }
        }
    }

    private boolean hasWork() {
        return state.pending() > 0 || writer.hasActiveItems();
    }
}
