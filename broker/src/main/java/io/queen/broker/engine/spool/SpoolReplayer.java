package io.queen.broker.engine.spool;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Replays sealed spool files oldest first, items in their original order, in batches of
 * FILE_BUFFER_MAX_BATCH consecutive items of one tenant. A database outage during a replay leaves
 * the file in place (this run resumes it after its last replayed batch); an item the database
 * rejects for good is moved to {@code failed/} so it cannot block the items behind it. A replayed
 * file is deleted, a damaged one set aside in {@code failed/} once its readable items are replayed.
 */
public final class SpoolReplayer {
    private static final Logger LOG = Logger.getLogger(SpoolReplayer.class.getName());
    /** The reference caps boot recovery at an hour, then serves and keeps draining in the background. */
    static final Duration BOOT_RECOVERY_BUDGET = Duration.ofHours(1);

    /** Where replayed items go: the normal push path. */
    @FunctionalInterface
    public interface Sink {
        void push(UUID tenant, List<SpoolFile.Entry> items) throws SQLException;
    }

    private final SpoolDirectory directory;
    private final SpoolWriter writer;
    private final Sink sink;
    private final int maxBatch;
    private final BooleanSupplier paused;
    private final SpoolState state;

    // Guarded by lock (one drainer at a time): items of a file already replayed.
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Path, Long> replayed = new HashMap<>();

    public SpoolReplayer(SpoolDirectory directory, SpoolWriter writer, Sink sink, int maxBatch, BooleanSupplier paused,
                         SpoolState state) {
        this.directory = directory;
        this.writer = writer;
        this.sink = sink;
        this.maxBatch = maxBatch;
        this.paused = paused;
        this.state = state;
    }

    /**
     * Replays what earlier runs left behind, before the broker serves, unless push maintenance is on.
     * Stops early (leaving the rest to the drain loop) when the database fails or the budget is spent.
     */
    public void recoverAtBoot() {
        if (state.pending() == 0 || paused.getAsBoolean()) {
            return;
        }
        long start = System.nanoTime();
        long before = state.pending();
        LOG.info("push spool: replaying " + before + " items left by an earlier run before serving");
        drain(System.nanoTime() + BOOT_RECOVERY_BUDGET.toNanos());
        LOG.info("push spool: boot replay done in " + (System.nanoTime() - start) / 1_000_000 + " ms, "
                + state.pending() + " items still pending");
    }

    /**
     * Seals the active file and replays sealed files oldest first until they are all gone, the
     * deadline passes, maintenance comes back on, or the database fails (the current file then stays,
     * and the next drain resumes it after its last replayed batch). Returns the items replayed.
     */
    public long drain(long deadlineNanos) {
        lock.lock();
        try {
            writer.seal();
            long total = 0;
            for (Path file : sealedFiles()) {
                if (paused.getAsBoolean() || System.nanoTime() > deadlineNanos) {
                    break;
                }
                long n = replayFile(file, deadlineNanos);
                if (n < 0) {
                    break;
                }
                total += n;
            }
            return total;
        } finally {
            lock.unlock();
        }
    }

    /** Every spool file but the one being appended to, oldest first. */
    private List<Path> sealedFiles() {
        Path current = writer.activePath();
        return directory.files().stream().filter(p -> !p.equals(current)).toList();
    }

    /** Items replayed from the file, or -1 when it must be resumed later (database down, paused, deadline). */
    private long replayFile(Path file, long deadlineNanos) {
        long done = replayed.getOrDefault(file, 0L);
        long index = 0;
        long replayedNow = 0;
        List<SpoolFile.Entry> batch = new ArrayList<>(maxBatch);
        SpoolFile.Ending ending;
        try (SpoolFile.Reader reader = new SpoolFile.Reader(file)) {
            SpoolFile.Entry e;
            while ((e = reader.next()) != null) {
                if (index++ < done) {
                    continue; // Replayed by an earlier attempt of this run.
                }
                if (!batch.isEmpty() && (batch.size() >= maxBatch || !batch.get(0).tenant().equals(e.tenant()))) {
                    if (!replayBatch(file, batch)) {
                        return -1;
                    }
                    replayedNow += batch.size();
                    batch.clear();
                    if (paused.getAsBoolean() || System.nanoTime() > deadlineNanos) {
                        return -1;
                    }
                }
                batch.add(e);
            }
            if (!batch.isEmpty()) {
                if (!replayBatch(file, batch)) {
                    return -1;
                }
                replayedNow += batch.size();
            }
            ending = reader.ending();
            if (ending == SpoolFile.Ending.TORN_TAIL && reader.position() > SpoolFile.HEADER.length) {
                LOG.warning("push spool: " + file.getFileName() + " ends with an incomplete record at byte "
                        + reader.position() + " (a write cut short by a crash, never acknowledged); ignored");
            }
        } catch (NoSuchFileException gone) {
            replayed.remove(file);
            return 0;
        } catch (IOException ioe) {
            LOG.log(Level.SEVERE, "push spool: cannot read " + file + "; kept for a retry", ioe);
            return -1;
        }
        replayed.remove(file);
        if (ending == SpoolFile.Ending.CORRUPT || ending == SpoolFile.Ending.NOT_A_SPOOL_FILE) {
            directory.quarantine(file, ending == SpoolFile.Ending.CORRUPT
                    ? "a damaged record after " + index + " readable items (those were replayed)"
                    : "it is not a spool file");
        } else {
            directory.delete(file);
        }
        LOG.info("push spool: replayed " + replayedNow + " items from " + file.getFileName() + "; "
                + state.pending() + " pending");
        return replayedNow;
    }

    /** Pushes one batch; false (file kept, progress remembered) when the database is unavailable. */
    private boolean replayBatch(Path file, List<SpoolFile.Entry> batch) {
        UUID tenant = batch.get(0).tenant();
        try {
            sink.push(tenant, batch);
            accept(file, batch.size());
            markHealthy(batch.get(0));
            return true;
        } catch (SQLException | RuntimeException e) {
            if (ReplayFailures.isTransient(e)) {
                state.markUnavailable();
                LOG.warning("push spool: replay of " + batch.size() + " items from " + file.getFileName()
                        + " (queue " + batch.get(0).queue() + ") failed, database unavailable: " + e.getMessage()
                        + "; retrying");
                return false;
            }
        }
        // The database answered but refused the batch: find the items it refuses for good, one by one.
        for (SpoolFile.Entry e : batch) {
            try {
                sink.push(tenant, List.of(e));
            } catch (SQLException | RuntimeException refusal) {
                if (ReplayFailures.isTransient(refusal)) {
                    state.markUnavailable();
                    return false;
                }
                LOG.severe("push spool: the database refuses item " + e.transactionId() + " for "
                        + e.queue() + "/" + e.partition() + " (tenant " + e.tenant() + "): " + refusal
                        + "; moving it to " + directory.failedDir());
                if (!directory.keepRefused(e)) {
                    return false;
                }
            }
            accept(file, 1);
        }
        markHealthy(batch.get(0));
        return true;
    }

    private void markHealthy(SpoolFile.Entry replayedItem) {
        if (state.markReachable()) {
            LOG.info("push spool: the database takes replays again (queue " + replayedItem.queue() + ", partition "
                    + replayedItem.partition() + "); pushes go to it directly, " + state.pending()
                    + " spooled items left");
        }
    }

    private void accept(Path file, int items) {
        replayed.merge(file, (long) items, Long::sum);
        state.replayed(items);
    }
}
