package io.queen.broker.engine;

import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Jitter;
import io.queen.broker.store.Database;
import io.queen.broker.store.SystemStateStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The cell-wide switches of {@code queen.system_state} (broker/DESIGN.md, Push spool and KV store):
 * push maintenance sends every push to the on-disk spool, pop maintenance answers every pop with an
 * empty 204, and the three kill switches stop the KV store, new timers and the timer fire.
 *
 * <p>The hot path reads in-process booleans. The truth shared by every broker of the cell is one row
 * per switch: read at boot, written by a flip, and re-read by a named background loop every
 * {@code refreshMs}, so a flip made on one broker is in force on all of them within about one period.
 * A flip whose row could not be written (database down) stays in force here and is written by the
 * loop once the database answers, instead of being reverted by the next read; one lock orders flips
 * against refreshes so a refresh never adopts a value older than a flip it raced with.
 *
 * <p>An absent row means off for the two maintenance modes and on for the three kill switches: a
 * fresh cell has no rows, and must boot serving.
 */
public final class MaintenanceSwitches implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MaintenanceSwitches.class.getName());
    public static final String PUSH_KEY = "maintenance_mode";
    public static final String POP_KEY = "pop_maintenance_mode";
    public static final String KV_KEY = "kv_enabled";
    public static final String TIMERS_SCHEDULE_KEY = "timers_schedule_enabled";
    public static final String TIMERS_FIRE_KEY = "timers_fire_enabled";

    /** One switch: its row's key and its value when the row is absent. */
    private enum Flag {
        PUSH(PUSH_KEY, false),
        POP(POP_KEY, false),
        KV(KV_KEY, true),
        TIMERS_SCHEDULE(TIMERS_SCHEDULE_KEY, true),
        TIMERS_FIRE(TIMERS_FIRE_KEY, true);

        final String key;
        final boolean whenAbsent;

        Flag(String key, boolean whenAbsent) {
            this.key = key;
            this.whenAbsent = whenAbsent;
        }

        /** Whether this value is the unusual one, worth a warning at boot. */
        boolean unusual(boolean value) {
            return value != whenAbsent;
        }
    }

    private static final List<String> KEYS = Stream.of(Flag.values()).map(f -> f.key).toList();

    private final Database database;
    private final long refreshMs;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Flag, AtomicBoolean> values = new EnumMap<>(Flag.class);
    // Guarded by lock: local flips not yet written to queen.system_state.
    private final Set<Flag> unwritten = EnumSet.noneOf(Flag.class);
    private volatile boolean running;
    private Thread loop;

    private MaintenanceSwitches(Database database, long refreshMs) {
        this.database = database;
        this.refreshMs = refreshMs;
        for (Flag f : Flag.values()) {
            values.put(f, new AtomicBoolean(f.whenAbsent));
        }
    }

    /** Reads every switch; a database that does not answer leaves them at their defaults until the loop can. */
    public static MaintenanceSwitches load(Database database, long refreshMs) {
        MaintenanceSwitches s = new MaintenanceSwitches(database, refreshMs);
        s.refresh();
        for (Flag f : Flag.values()) {
            if (f.unusual(s.get(f))) {
                LOG.warning("booting with " + f.key + "=" + s.get(f) + " (queen.system_state)");
            }
        }
        return s;
    }

    public boolean pushPaused() {
        return get(Flag.PUSH);
    }

    public boolean popPaused() {
        return get(Flag.POP);
    }

    /** The KV kill switch: off, every KV route answers 503 kv_disabled. */
    public boolean kvEnabled() {
        return get(Flag.KV);
    }

    /** Whether new timers are accepted: off, a POST /timers that schedules answers 503 timers_disabled (cancels pass). */
    public boolean timersScheduleEnabled() {
        return get(Flag.TIMERS_SCHEDULE);
    }

    /** Whether due timers are delivered: off, every broker's sweeper leaves them pending. */
    public boolean timersFireEnabled() {
        return get(Flag.TIMERS_FIRE);
    }

    private boolean get(Flag f) {
        return values.get(f).get();
    }

    /**
     * Flips push maintenance here at once and writes it for the other brokers (later if the database
     * is down: spooling pushes is what an operator turns on during an outage). True when written now.
     */
    public boolean setPush(boolean enabled) {
        return set(Map.of(Flag.PUSH, enabled));
    }

    public boolean setPop(boolean enabled) {
        return set(Map.of(Flag.POP, enabled));
    }

    /**
     * Flips any of the three kill switches (a null leaves that one as it is), here at once and in
     * queen.system_state for the other brokers. True when written now.
     */
    public boolean setKvTimers(Boolean kv, Boolean timersSchedule, Boolean timersFire) {
        Map<Flag, Boolean> flips = new EnumMap<>(Flag.class);
        if (kv != null) {
            flips.put(Flag.KV, kv);
        }
        if (timersSchedule != null) {
            flips.put(Flag.TIMERS_SCHEDULE, timersSchedule);
        }
        if (timersFire != null) {
            flips.put(Flag.TIMERS_FIRE, timersFire);
        }
        return set(flips);
    }

    private boolean set(Map<Flag, Boolean> flips) {
        lock.lock();
        try {
            flips.forEach((f, enabled) -> {
                values.get(f).set(enabled);
                unwritten.add(f);
                if (f.unusual(enabled)) {
                    LOG.warning(f.key + " set to " + enabled + " on this broker");
                } else {
                    LOG.info(f.key + " set to " + enabled + " on this broker");
                }
            });
            try (Connection c = database.connection()) {
                c.setAutoCommit(true);
                writeUnwritten(c);
                return true;
            } catch (SQLException | RuntimeException e) {
                LOG.warning(flips + " in force on this broker but not yet written to queen.system_state ("
                        + e.getMessage() + "); retrying every " + refreshMs + " ms");
                return false;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes any unwritten local flip, then adopts the stored switches. Never throws: when the database
     * does not answer the in-process values stay as they are.
     */
    public void refresh() {
        lock.lock();
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            writeUnwritten(c);
            Map<String, Boolean> stored = SystemStateStore.flags(c, KEYS);
            for (Flag f : Flag.values()) {
                adopt(f, stored.getOrDefault(f.key, f.whenAbsent));
            }
        } catch (SQLException | RuntimeException e) {
            LOG.log(Level.FINE, "switches not refreshed from queen.system_state", e);
        } finally {
            lock.unlock();
        }
    }

    private void writeUnwritten(Connection c) throws SQLException {
        for (Flag f : Flag.values()) {
            if (unwritten.contains(f)) {
                SystemStateStore.setFlag(c, f.key, get(f));
                unwritten.remove(f);
            }
        }
    }

    private void adopt(Flag f, boolean stored) {
        if (values.get(f).getAndSet(stored) != stored) {
            LOG.log(f.unusual(stored) ? Level.WARNING : Level.INFO, f.key + " is now " + stored
                    + " (changed in queen.system_state, by another broker or an operator)");
        }
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
                LOG.log(Level.WARNING, "switch refresh failed; retrying", e);
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
