package io.queen.broker.engine;

import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.engine.spool.SpoolDirectory;
import io.queen.broker.engine.spool.SpoolDrainLoop;
import io.queen.broker.engine.spool.SpoolFile;
import io.queen.broker.engine.spool.SpoolReplayer;
import io.queen.broker.engine.spool.SpoolState;
import io.queen.broker.engine.spool.SpoolWriter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The on-disk push spool (broker/DESIGN.md, Push spool): while push maintenance is on, and
 * while the database is unavailable ({@link PushIntake}), push items are appended here and answered
 * {@code buffered}; a named drain loop replays them through the normal push path. This class binds
 * the push path's items to the parts in {@code engine/spool}: {@link SpoolWriter} (durable appends),
 * {@link SpoolReplayer} (replay, refusals, boot recovery), {@link SpoolDrainLoop} (the background
 * drain), {@link SpoolDirectory} (the files) and {@link SpoolState} (counters and health).
 *
 * <p>Outages: a push that fails on a connection failure or pool timeout is spooled whole, also the
 * partitions it may have committed before the connection broke, and {@link #bufferDuringOutage}
 * marks the database unhealthy. Until a replay gets through (the drain loop probes with backoff),
 * {@link #outageInProgress} sends pushes straight here instead of holding each for the pool's
 * timeout. Order is kept among spooled items; pushes answered {@code queued} while older spooled
 * items still drain may be stored before them.
 *
 * <p>Replay: each item is replayed with the message id and transactionId it was answered with
 * (fixed on {@link PushService.Item} before its first attempt; the message id is the transactionId
 * when the client gave none), so an item stored twice over (a push that committed before its
 * connection broke, a crash between a replay's commit and the file's deletion, a retried batch) is
 * absorbed by deduplication inside the queue's dedup window (a queue with
 * {@code dedupWindowSeconds=0}, or an outage longer than the window, is not protected). Files left
 * by an earlier run are replayed at boot, before the broker serves.
 */
public final class PushSpool implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PushSpool.class.getName());
    private static final String BUFFERED = "buffered";
    private static final String FAILED = "failed";

    /** Where replayed items go: the normal push path. */
    @FunctionalInterface
    public interface Replayer {
        List<PushService.Result> push(UUID tenant, List<PushService.Item> items) throws SQLException;
    }

    /** Sealed spool files awaiting the drain: how many and how large. */
    public record FileStats(int count, long totalBytes) {
    }

    private final SpoolDirectory directory;
    private final SpoolState state;
    private final SpoolWriter writer;
    private final SpoolReplayer replayer;
    private final SpoolDrainLoop loop;

    public PushSpool(MaintenanceSettings settings, Replayer replayer, BooleanSupplier paused) {
        this.directory = new SpoolDirectory(settings.spoolDir());
        long found = directory.countItems();
        this.state = new SpoolState(found);
        this.writer = new SpoolWriter(directory, settings.spoolEventsPerFile(), state);
        this.replayer = new SpoolReplayer(directory, writer,
                (tenant, entries) -> replayer.push(tenant, items(entries)), settings.spoolMaxBatch(), paused, state);
        this.loop = new SpoolDrainLoop(this.replayer, writer, state, paused, settings.spoolFlushMs(), directory);
        if (found > 0) {
            LOG.warning("push spool " + directory.path() + " holds " + found + " items from an earlier run");
        }
    }

    /**
     * Spools a push request's items and answers each {@code buffered}, or every one {@code failed}
     * when the spool could not be written durably. Each item is spooled with the message id and
     * transactionId it was made with (the message id when the client gave none), which are the ones
     * answered and the ones the replay pushes with.
     */
    public List<PushService.Result> buffer(UUID tenant, List<PushService.Item> items) {
        if (items.isEmpty()) {
            return List.of();
        }
        List<SpoolFile.Entry> entries = new ArrayList<>(items.size());
        for (PushService.Item item : items) {
            entries.add(new SpoolFile.Entry(tenant, item.messageId(), item.queue(), item.partition(),
                    item.effectiveTransactionId(), item.traceId(), item.producerSub(), item.payload()));
        }
        String status = writer.append(entries) ? BUFFERED : FAILED;
        List<PushService.Result> out = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            PushService.Item item = items.get(i);
            out.add(new PushService.Result(i, item.messageId(), item.effectiveTransactionId(), item.queue(), status));
        }
        return out;
    }

    /**
     * Spools the items of a push the database could not take (it may have committed some of them
     * before its connection broke: their replay is deduplicated). Marks the database unhealthy, so
     * that pushes go straight here until a replay reaches it again.
     */
    public List<PushService.Result> bufferDuringOutage(UUID tenant, List<PushService.Item> items, Throwable cause) {
        if (state.markUnavailable()) {
            PushService.Item first = items.isEmpty() ? null : items.get(0);
            LOG.warning("push spool: database unavailable" + (first == null ? ""
                    : " (push to queue " + first.queue() + ", partition " + first.partition() + ")")
                    + ": " + cause.getMessage() + "; pushes are spooled to " + directory.path()
                    + " until a replay reaches it");
        }
        return buffer(tenant, items);
    }

    /**
     * A push reached the database: clears the outage mark when no spooled item was left to clear it
     * (the spool could not be written, or its items were replayed by now). One volatile read when healthy.
     */
    public void databaseReachable() {
        if (state.markReachable()) {
            LOG.info("push spool: pushes reach the database again; " + state.pending() + " spooled items pending");
        }
    }

    /** See {@link SpoolState#outageInProgress()}: a push should go straight to the spool. */
    public boolean outageInProgress() {
        return state.outageInProgress();
    }

    /** True when any item of the answer could not be spooled (the route then answers 500, or 503 in an outage). */
    public static boolean anyFailed(List<PushService.Result> results) {
        return results.stream().anyMatch(r -> FAILED.equals(r.status()));
    }

    /** Items spooled and not yet replayed. */
    public long pendingCount() {
        return state.pending();
    }

    /** Items answered {@code failed} because the spool could not be written, since boot. */
    public long failedCount() {
        return state.failed();
    }

    /** The last replay attempt reached the database (true until one fails). */
    public boolean databaseHealthy() {
        return state.databaseHealthy();
    }

    /** The spool can take writes and its replays reach the database. */
    public boolean healthy() {
        return state.healthy();
    }

    public FileStats fileStats() {
        int count = 0;
        long total = 0;
        for (Path p : directory.files()) {
            try {
                total += Files.size(p);
                count++;
            } catch (IOException ignored) {
                // Drained and deleted meanwhile.
            }
        }
        return new FileStats(count, total);
    }

    /** Replays what earlier runs left behind, before the broker serves ({@link SpoolReplayer#recoverAtBoot()}). */
    public void recoverAtBoot() {
        replayer.recoverAtBoot();
    }

    /** One drain pass until {@code deadlineNanos} ({@link SpoolReplayer#drain}); returns the items replayed. */
    long drain(long deadlineNanos) {
        return replayer.drain(deadlineNanos);
    }

    /** Starts the drain loop. */
    public void start() {
        loop.start();
    }

    /** Stops the drain loop and closes the active file; whatever is pending replays at the next boot. */
    @Override
    public void close() {
        loop.stop();
        writer.seal();
        if (state.pending() > 0) {
            LOG.warning("push spool " + directory.path() + " still holds " + state.pending()
                    + " items; they replay at the next boot");
        }
    }

    private static List<PushService.Item> items(List<SpoolFile.Entry> entries) {
        List<PushService.Item> items = new ArrayList<>(entries.size());
        for (SpoolFile.Entry e : entries) {
            // The spooled message id too: a replayed item keeps the id its client was answered with.
            items.add(new PushService.Item(e.queue(), e.partition(), e.payload(), e.transactionId(), e.traceId(),
                    e.messageId(), e.producerSub()));
        }
        return items;
    }
}
