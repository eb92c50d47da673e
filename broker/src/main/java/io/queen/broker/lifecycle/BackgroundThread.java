package io.queen.broker.lifecycle;

import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * How the broker's background loops (the jobs, the spool drain, the switch refresh, the wake
 * channel's sender and listener) start, pause and stop: each on a named daemon platform thread, a
 * pause that a stop interrupts, and a stop that interrupts, waits a bounded time, and says so when
 * the thread did not end. A loop checks its own stop flag after every pause.
 */
public final class BackgroundThread {
    private static final Logger LOG = Logger.getLogger(BackgroundThread.class.getName());

    private BackgroundThread() {
    }

    /** A daemon platform thread named {@code name}, not started. */
    public static Thread create(String name, Runnable loop) {
        return Thread.ofPlatform().name(name).daemon(true).unstarted(() -> {
            try {
                loop.run();
            } catch (RuntimeException | Error e) {
                // The loops handle their own failures: this one is a bug, and the loop is gone.
                LOG.log(Level.SEVERE, name + " ended on an unexpected failure", e);
                throw e;
            }
        });
    }

    public static Thread start(String name, Runnable loop) {
        Thread t = create(name, loop);
        t.start();
        return t;
    }

    /** Sleeps {@code ms}; false when interrupted, which only a stop does (the flag is kept for the loop). */
    public static boolean pause(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Interrupts {@code t} (its owner has set its stop flag) and waits up to {@code patience} for it
     * to end; a thread still alive then is logged, naming {@code what} it may be stuck on.
     */
    public static void stop(Thread t, Duration patience, String what) {
        if (t == null) {
            return;
        }
        t.interrupt();
        try {
            t.join(patience.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warning(t.getName() + " did not stop within " + patience.toMillis() + " ms" + (what == null ? "" : " (" + what + ")"));
        }
    }
}
