package io.queen.broker.engine;

import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Jitter;
import io.queen.broker.store.Database;
import io.queen.broker.store.SystemStateStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The two maintenance switches (broker/DESIGN.md, Push spool): push maintenance sends every push to
 * the on-disk spool, pop maintenance answers every pop with an empty 204.
 *
 * <p>The hot path reads two volatile booleans. The truth shared by every broker of the cell is the
 * pair of rows in {@code queen.system_state}: read at boot, written by a flip, and re-read by a
 * named background loop every {@code refreshMs}, so a flip made on one broker is in force on all of
 * them within about one period. A flip whose row could not be written (database down) stays in
 * force here and is written by the loop once the database answers, instead of being reverted by the
 * next read; one lock orders flips against refreshes so a refresh never adopts a value older than a
 * flip it raced with.
 */
public final class MaintenanceSwitches implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MaintenanceSwitches.class.getName());
    public static final String PUSH_KEY = "maintenance_mode";
    public static final String POP_KEY = "pop_maintenance_mode";
    private static final List<String> KEYS = List.of(PUSH_KEY, POP_KEY);

    private final Database database;
    private final long refreshMs;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean push;
    private volatile boolean pop;
    // Guarded by lock: a local flip not yet written to queen.system_state.
    private boolean pushUnwritten;
    private boolean popUnwritten;
    private volatile boolean running;
    private Thread loop;

    private MaintenanceSwitches(Database database, long refreshMs) {
        this.database = database;
        this.refreshMs = refreshMs;
    }

    /** Reads both flags; a database that does not answer leaves them off until the loop can read them. */
    public static MaintenanceSwitches load(Database database, long refreshMs) {
        MaintenanceSwitches s = new MaintenanceSwitches(database, refreshMs);
        s.refresh();
        if (s.push || s.pop) {
            LOG.warning("booting in maintenance: maintenance_mode=" + s.push + ", pop_maintenance_mode=" + s.pop
                    + " (queen.system_state)");
        }
        return s;
    }

    public boolean pushPaused() {
        return push;
    }

    public boolean popPaused() {
        return pop;
    }

    /**
     * Flips push maintenance here at once and writes it for the other brokers (later if the database
     * is down: spooling pushes is what an operator turns on during an outage). True when written now.
     */
    public boolean setPush(boolean enabled) {
        return set(PUSH_KEY, enabled);
    }

    public boolean setPop(boolean enabled) {
        return set(POP_KEY, enabled);
    }

    private boolean set(String key, boolean enabled) {
        lock.lock();
        try {
            if (key.equals(PUSH_KEY)) {
                push = enabled;
                pushUnwritten = true;
            } else {
                pop = enabled;
                popUnwritten = true;
            }
            LOG.info(key + " set to " + enabled + " on this broker");
            try (Connection c = database.connection()) {
                c.setAutoCommit(true);
                writeUnwritten(c);
                return true;
            } catch (SQLException | RuntimeException e) {
                LOG.warning(key + "=" + enabled + " is in force on this broker but not yet written to"
                        + " queen.system_state (" + e.getMessage() + "); retrying every " + refreshMs + " ms");
                return false;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes any unwritten local flip, then adopts the stored flags. Never throws: when the database
     * does not answer the in-process flags stay as they are.
     */
    public void refresh() {
        lock.lock();
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            writeUnwritten(c);
            Map<String, Boolean> stored = SystemStateStore.flags(c, KEYS);
            // An absent row means off for both maintenance flags.
            adopt(PUSH_KEY, stored.getOrDefault(PUSH_KEY, false));
            adopt(POP_KEY, stored.getOrDefault(POP_KEY, false));
        } catch (SQLException | RuntimeException e) {
            LOG.log(Level.FINE, "maintenance flags not refreshed from queen.system_state", e);
        } finally {
            lock.unlock();
        }
    }

    private void writeUnwritten(Connection c) throws SQLException {
        if (pushUnwritten) {
            SystemStateStore.setFlag(c, PUSH_KEY, push);
            pushUnwritten = false;
        }
        if (popUnwritten) {
            SystemStateStore.setFlag(c, POP_KEY, pop);
            popUnwritten = false;
        }
    }

    private void adopt(String key, boolean stored) {
        boolean current = key.equals(PUSH_KEY) ? push : pop;
        if (current == stored) {
            return;
        }
        if (key.equals(PUSH_KEY)) {
            push = stored;
        } else {
            pop = stored;
        }
        LOG.info(key + " is now " + stored + " (changed in queen.system_state, by another broker or an operator)");
    }

    /** Starts the refresh loop. */
    public synchronized void start() {
        if (loop != null) {
            return;
        }
        running = true;
        loop = BackgroundThread.start("queen-switches-refresh", this::run);
    }

    private void run() {
        // 10 % jitter so replicas booted together do not poll in lock-step.
        while (running && BackgroundThread.pause(Jitter.spread(refreshMs, 0.1))) {
            try {
                refresh();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "maintenance flag refresh failed; retrying", e);
            }
        }
    }

    @Override
    public synchronized void close() {
        running = false;
        BackgroundThread.stop(loop, Duration.ofSeconds(5), null);
        loop = null;
    }
}
