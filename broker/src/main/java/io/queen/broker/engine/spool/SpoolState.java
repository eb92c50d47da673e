package io.queen.broker.engine.spool;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the spool's writer, replayer and drain loop share, and the push route reads: items pending,
 * items refused for want of a durable write, whether the spool can be written, and whether the
 * database was last seen reachable.
 */
public final class SpoolState {
    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean writable = new AtomicBoolean(true);
    private final AtomicBoolean databaseHealthy = new AtomicBoolean(true);

    /** @param pending the items found in the spool at boot */
    public SpoolState(long pending) {
        this.pending.set(pending);
    }

    /** Items spooled and not yet replayed. */
    public long pending() {
        return pending.get();
    }

    /** Items answered {@code failed} because the spool could not be written, since boot. */
    public long failed() {
        return failed.get();
    }

    /** The database was last seen reachable (true until a push or a replay finds it unavailable). */
    public boolean databaseHealthy() {
        return databaseHealthy.get();
    }

    /** The spool can take writes and its replays reach the database. */
    public boolean healthy() {
        return writable.get() && databaseHealthy.get();
    }

    /**
     * The database was found unavailable and spooled items wait for it: a push should go straight to
     * the spool (the drain loop probes the database and clears this once a replay gets through).
     */
    public boolean outageInProgress() {
        return !databaseHealthy.get() && pending.get() > 0;
    }

    /** Marks the database unavailable; true when it was healthy until now. */
    public boolean markUnavailable() {
        return databaseHealthy.getAndSet(false);
    }

    /** Marks the database reachable; true when it was not. One volatile read when healthy. */
    public boolean markReachable() {
        return !databaseHealthy.get() && databaseHealthy.compareAndSet(false, true);
    }

    /** Items written durably. */
    void spooled(int items) {
        pending.addAndGet(items);
        writable.set(true);
    }

    /** Items that could not be written durably. */
    void refused(int items) {
        failed.addAndGet(items);
        writable.set(false);
    }

    /** Items replayed; floored, so a file that could not be deleted is replayed (deduplicated) again without being recounted. */
    void replayed(int items) {
        pending.updateAndGet(v -> Math.max(0, v - items));
    }
}
