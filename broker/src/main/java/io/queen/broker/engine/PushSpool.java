package io.queen.broker.engine;

import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.lifecycle.Backoff;
import io.queen.broker.store.SqlStates;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The on-disk push spool (broker/DESIGN.md, Push spool): while push maintenance is on, and
 * while the database is unavailable ({@link PushIntake}), push items are appended here and answered
 * {@code buffered}; a named drain loop replays them through the normal push path.
 *
 * <p>Outages: a push that fails on a connection failure or pool timeout is spooled whole, also the
 * partitions it may have committed before the connection broke, and {@link #bufferDuringOutage}
 * marks the database unhealthy. Until a replay gets through (the drain loop probes with backoff),
 * {@link #outageInProgress} sends pushes straight here instead of holding each for the pool's
 * timeout. Order is kept among spooled items; pushes answered {@code queued} while older spooled
 * items still drain may be stored before them.
 *
 * <p>Durability: a request's records are written and fsynced (and a new file's directory entry
 * too) before the request is answered, so an answered item survives a crash. A failed write is
 * truncated away and answered {@code failed}; nothing is half-written into a file that is appended
 * to again.
 *
 * <p>Replay: files are drained oldest first, items in their original order, in batches of
 * FILE_BUFFER_MAX_BATCH consecutive items of one tenant, each item with the message id and
 * transactionId it was answered with (fixed on {@link PushService.Item} before its first attempt;
 * the message id is the transactionId when the client gave none), so an item stored twice over (a
 * push that committed before its connection broke, a crash between a replay's commit and the
 * file's deletion, a retried batch) is absorbed by deduplication inside the queue's dedup window
 * (a queue with {@code dedupWindowSeconds=0}, or an outage longer than the window, is not
 * protected). A database outage during a replay leaves the file in place and backs off; an item the database rejects for good is moved to
 * {@code failed/} beside the spool so it cannot block the items behind it. Files left by an earlier
 * run are replayed at boot, before the broker serves.
 *
 * <p>Files are {@code spool-<epoch ms>-<seq>.log} in FILE_BUFFER_DIR (created on first use). Only
 * the newest file is appended to, and only by this process; every other file is sealed.
 */
public final class PushSpool implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PushSpool.class.getName());
    static final String PREFIX = "spool-";
    static final String SUFFIX = ".log";
    static final String FAILED_DIR = "failed";
    private static final long MAX_BACKOFF_MS = 5_000;
    /** The reference caps boot recovery at an hour, then serves and keeps draining in the background. */
    static final Duration BOOT_RECOVERY_BUDGET = Duration.ofHours(1);

    /** Where replayed items go: the normal push path. */
    @FunctionalInterface
    public interface Replayer {
        List<PushService.Result> push(UUID tenant, List<PushService.Item> items) throws SQLException;
    }

    /** Sealed spool files awaiting the drain: how many and how large. */
    public record FileStats(int count, long totalBytes) {
    }

    private final Path dir;
    private final int maxBatch;
    private final int itemsPerFile;
    private final long idleMs;
    private final Replayer replayer;
    private final BooleanSupplier paused;

    private final ReentrantLock writeLock = new ReentrantLock();
    // Guarded by writeLock: the file being appended to.
    private FileChannel active;
    private Path activePath;
    private int activeItems;
    private long fileSeq;

    // Guarded by the drain (one drainer at a time, drainLock): items of a file already replayed.
    private final ReentrantLock drainLock = new ReentrantLock();
    private final Map<Path, Long> replayed = new HashMap<>();

    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean writable = new AtomicBoolean(true);
    private final AtomicBoolean databaseHealthy = new AtomicBoolean(true);
    private volatile boolean running;
    private Thread loop;

    public PushSpool(MaintenanceSettings settings, Replayer replayer, BooleanSupplier paused) {
        this.dir = settings.spoolDir();
        this.maxBatch = settings.spoolMaxBatch();
        this.itemsPerFile = settings.spoolEventsPerFile();
        this.idleMs = settings.spoolFlushMs();
        this.replayer = replayer;
        this.paused = paused;
        long found = countPending();
        pending.set(found);
        if (found > 0) {
            LOG.warning("push spool " + dir + " holds " + found + " items from an earlier run");
        }
    }

    // ---------------------------------------------------------------- write side

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
        List<byte[]> records = new ArrayList<>(items.size());
        int bytes = 0;
        for (PushService.Item item : items) {
            byte[] r = SpoolFile.encode(new SpoolFile.Entry(tenant, item.messageId(), item.queue(), item.partition(),
                    item.effectiveTransactionId(), item.traceId(), item.payload()));
            records.add(r);
            bytes += r.length;
        }
        boolean ok = append(records, bytes);
        List<PushService.Result> out = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            PushService.Item item = items.get(i);
            out.add(new PushService.Result(i, item.messageId(), item.effectiveTransactionId(), item.queue(),
                    ok ? "buffered" : "failed"));
        }
        return out;
    }

    /**
     * Spools the items of a push the database could not take (it may have committed some of them
     * before its connection broke: their replay is deduplicated). Marks the database unhealthy, so
     * that pushes go straight here until a replay reaches it again.
     */
    public List<PushService.Result> bufferDuringOutage(UUID tenant, List<PushService.Item> items, Throwable cause) {
        if (databaseHealthy.getAndSet(false)) {
            PushService.Item first = items.isEmpty() ? null : items.get(0);
            LOG.warning("push spool: database unavailable" + (first == null ? ""
                    : " (push to queue " + first.queue() + ", partition " + first.partition() + ")")
                    + ": " + cause.getMessage() + "; pushes are spooled to " + dir + " until a replay reaches it");
        }
        return buffer(tenant, items);
    }

    /**
     * A push reached the database: clears the outage mark when no spooled item was left to clear it
     * (the spool could not be written, or its items were replayed by now). One volatile read when healthy.
     */
    public void databaseReachable() {
        if (!databaseHealthy.get() && databaseHealthy.compareAndSet(false, true)) {
            LOG.info("push spool: pushes reach the database again; " + pending.get() + " spooled items pending");
        }
    }

    /**
     * The database was found unavailable and spooled items wait for it: a push should go straight to
     * the spool (the drain loop probes the database and clears this once a replay gets through).
     */
    public boolean outageInProgress() {
        return !databaseHealthy.get() && pending.get() > 0;
    }

    /** True when any item of the answer could not be spooled (the route then answers 500, or 503 in an outage). */
    public static boolean anyFailed(List<PushService.Result> results) {
        return results.stream().anyMatch(r -> "failed".equals(r.status()));
    }

    private boolean append(List<byte[]> records, int bytes) {
        writeLock.lock();
        try {
            if (active == null) {
                openActive();
            }
            long start = active.position();
            try {
                ByteBuffer buf = ByteBuffer.allocate(bytes);
                records.forEach(buf::put);
                buf.flip();
                while (buf.hasRemaining()) {
                    active.write(buf);
                }
                active.force(false);
            } catch (IOException | RuntimeException e) {
                abandonActive(start);
                throw e;
            }
            activeItems += records.size();
            pending.addAndGet(records.size());
            writable.set(true);
            if (activeItems >= itemsPerFile) {
                sealActive();
            }
            return true;
        } catch (IOException | RuntimeException e) {
            failed.addAndGet(records.size());
            writable.set(false);
            LOG.severe("push spool " + dir + ": cannot write " + records.size()
                    + " items durably; they are answered failed: " + e);
            return false;
        } finally {
            writeLock.unlock();
        }
    }

    private void openActive() throws IOException {
        Files.createDirectories(dir);
        Path path;
        do {
            path = dir.resolve(String.format("%s%013d-%08d%s", PREFIX, System.currentTimeMillis(), fileSeq++, SUFFIX));
        } while (Files.exists(path));
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            ch.write(ByteBuffer.wrap(SpoolFile.HEADER));
            ch.force(true);
            syncDirectory(dir);
        } catch (IOException | RuntimeException e) {
            ch.close();
            Files.deleteIfExists(path);
            throw e;
        }
        active = ch;
        activePath = path;
        activeItems = 0;
        LOG.info("push spool: writing " + path);
    }

    /** After a failed append: cut the partial record off and stop appending to this file. */
    private void abandonActive(long validLength) {
        try {
            active.truncate(validLength);
            active.force(true);
        } catch (IOException | RuntimeException e) {
            // Left as a torn tail, which the reader skips; the file is never appended to again.
            LOG.log(Level.WARNING, "push spool: cannot truncate " + activePath + " after a failed write", e);
        }
        sealActive();
    }

    /** Closes the active file so the drain may take it; an empty one is removed. Caller holds writeLock. */
    private void sealActive() {
        if (active == null) {
            return;
        }
        Path path = activePath;
        int items = activeItems;
        try {
            active.close();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: closing " + path, e);
        }
        active = null;
        activePath = null;
        activeItems = 0;
        if (items == 0) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOG.log(Level.FINE, "push spool: removing empty " + path, e);
            }
        }
    }

    // ---------------------------------------------------------------- read side

    /** Items spooled and not yet replayed. */
    public long pendingCount() {
        return pending.get();
    }

    /** Items answered {@code failed} because the spool could not be written, since boot. */
    public long failedCount() {
        return failed.get();
    }

    /** The last replay attempt reached the database (true until one fails). */
    public boolean databaseHealthy() {
        return databaseHealthy.get();
    }

    /** The spool can take writes and its replays reach the database. */
    public boolean healthy() {
        return writable.get() && databaseHealthy.get();
    }

    public FileStats fileStats() {
        int count = 0;
        long total = 0;
        for (Path p : spoolFiles()) {
            try {
                total += Files.size(p);
                count++;
            } catch (IOException ignored) {
                // Drained and deleted meanwhile.
            }
        }
        return new FileStats(count, total);
    }

    // ---------------------------------------------------------------- drain

    /**
     * Replays what earlier runs left behind, before the broker serves, unless push maintenance is on.
     * Stops early (leaving the rest to the drain loop) when the database fails or the budget is spent.
     */
    public void recoverAtBoot() {
        if (pending.get() == 0 || paused.getAsBoolean()) {
            return;
        }
        long start = System.nanoTime();
        long before = pending.get();
        LOG.info("push spool: replaying " + before + " items left by an earlier run before serving");
        drain(System.nanoTime() + BOOT_RECOVERY_BUDGET.toNanos());
        LOG.info("push spool: boot replay done in " + (System.nanoTime() - start) / 1_000_000 + " ms, "
                + pending.get() + " items still pending");
    }

    /**
     * Seals the active file and replays sealed files oldest first until they are all gone, the
     * deadline passes, maintenance comes back on, or the database fails (the current file then stays,
     * and the next drain resumes it after its last replayed batch). Returns the items replayed.
     */
    long drain(long deadlineNanos) {
        drainLock.lock();
        try {
            writeLock.lock();
            try {
                sealActive();
            } finally {
                writeLock.unlock();
            }
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
            drainLock.unlock();
        }
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
            quarantine(file, ending == SpoolFile.Ending.CORRUPT
                    ? "a damaged record after " + index + " readable items (those were replayed)"
                    : "it is not a spool file");
        } else {
            delete(file);
        }
        LOG.info("push spool: replayed " + replayedNow + " items from " + file.getFileName() + "; "
                + pending.get() + " pending");
        return replayedNow;
    }

    /** Pushes one batch; false (file kept, progress remembered) when the database is unavailable. */
    private boolean replayBatch(Path file, List<SpoolFile.Entry> batch) {
        UUID tenant = batch.get(0).tenant();
        try {
            replayer.push(tenant, items(batch));
            accept(file, batch.size());
            markHealthy(batch.get(0));
            return true;
        } catch (SQLException | RuntimeException e) {
            if (isTransient(e)) {
                databaseHealthy.set(false);
                LOG.warning("push spool: replay of " + batch.size() + " items from " + file.getFileName()
                        + " (queue " + batch.get(0).queue() + ") failed, database unavailable: " + e.getMessage()
                        + "; retrying");
                return false;
            }
        }
        // The database answered but refused the batch: find the items it refuses for good, one by one.
        for (SpoolFile.Entry e : batch) {
            try {
                replayer.push(tenant, items(List.of(e)));
            } catch (SQLException | RuntimeException refusal) {
                if (isTransient(refusal)) {
                    databaseHealthy.set(false);
                    return false;
                }
                LOG.severe("push spool: the database refuses item " + e.transactionId() + " for "
                        + e.queue() + "/" + e.partition() + " (tenant " + e.tenant() + "): " + refusal
                        + "; moving it to " + dir.resolve(FAILED_DIR));
                if (!keepRefused(e)) {
                    return false;
                }
            }
            accept(file, 1);
        }
        markHealthy(batch.get(0));
        return true;
    }

    private void markHealthy(SpoolFile.Entry replayedItem) {
        if (!databaseHealthy.getAndSet(true)) {
            LOG.info("push spool: the database takes replays again (queue " + replayedItem.queue() + ", partition "
                    + replayedItem.partition() + "); pushes go to it directly, " + pending.get() + " spooled items left");
        }
    }

    private void accept(Path file, int items) {
        replayed.merge(file, (long) items, Long::sum);
        // Floored: a file that could not be deleted is replayed (deduplicated) again without being recounted.
        pending.updateAndGet(v -> Math.max(0, v - items));
    }

    private static List<PushService.Item> items(List<SpoolFile.Entry> entries) {
        List<PushService.Item> items = new ArrayList<>(entries.size());
        for (SpoolFile.Entry e : entries) {
            // The spooled message id too: a replayed item keeps the id its client was answered with.
            items.add(new PushService.Item(e.queue(), e.partition(), e.payload(), e.transactionId(), e.traceId(),
                    e.messageId()));
        }
        return items;
    }

    /** Connection-class failures, pool timeouts, server shutdown, lock conflicts: the same push may succeed later. */
    static boolean isTransient(Throwable t) {
        for (Throwable cur = t; cur != null; cur = cur.getCause()) {
            if (cur instanceof SQLTransientException) {
                return true;
            }
        }
        if (SqlStates.of(t) == null) {
            return true; // No server verdict: the database was not reached.
        }
        return SqlStates.isRetryable(t);
    }

    /** Appends a refused item to a file under failed/, durably, for a human to look at. */
    private boolean keepRefused(SpoolFile.Entry e) {
        Path failedDir = dir.resolve(FAILED_DIR);
        Path file = failedDir.resolve("refused-" + e.messageId() + SUFFIX);
        try {
            Files.createDirectories(failedDir);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(ByteBuffer.wrap(SpoolFile.HEADER));
                ch.write(ByteBuffer.wrap(SpoolFile.encode(e)));
                ch.force(true);
            }
            syncDirectory(failedDir);
            return true;
        } catch (IOException | RuntimeException io) {
            LOG.log(Level.SEVERE, "push spool: cannot keep refused item in " + file + "; its file stays", io);
            return false;
        }
    }

    private void quarantine(Path file, String why) {
        Path failedDir = dir.resolve(FAILED_DIR);
        try {
            Files.createDirectories(failedDir);
            Files.move(file, failedDir.resolve(file.getFileName()), StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(failedDir);
            syncDirectory(dir);
            LOG.severe("push spool: moved " + file.getFileName() + " to " + failedDir + ": " + why);
        } catch (IOException e) {
            LOG.log(Level.SEVERE, "push spool: cannot move " + file + " aside (" + why + ")", e);
        }
    }

    private void delete(Path file) {
        try {
            Files.deleteIfExists(file);
            syncDirectory(dir);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: cannot delete replayed " + file + "; it would replay again"
                    + " (deduplicated)", e);
        }
    }

    /** Starts the drain loop. */
    public synchronized void start() {
        if (loop != null) {
            return;
        }
        running = true;
        loop = BackgroundThread.start("queen-spool-drain", this::run);
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
                    LOG.info("push spool: draining " + pending.get() + " items from " + dir);
                    announced = true;
                }
                long before = pending.get();
                drain(Long.MAX_VALUE);
                if (pending.get() > 0 && !databaseHealthy.get()) {
                    wait = backoff.next();
                } else {
                    backoff.reset();
                    if (pending.get() == 0 && before > 0) {
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
        if (pending.get() > 0) {
            return true;
        }
        writeLock.lock();
        try {
            return activeItems > 0;
        } finally {
            writeLock.unlock();
        }
    }

    /** Stops the drain loop and closes the active file; whatever is pending replays at the next boot. */
    @Override
    public synchronized void close() {
        running = false;
        BackgroundThread.stop(loop, Duration.ofSeconds(10), "replaying spooled pushes");
        loop = null;
        writeLock.lock();
        try {
            sealActive();
        } finally {
            writeLock.unlock();
        }
        if (pending.get() > 0) {
            LOG.warning("push spool " + dir + " still holds " + pending.get() + " items; they replay at the next boot");
        }
    }

    // ---------------------------------------------------------------- files

    private List<Path> spoolFiles() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith(PREFIX) && n.endsWith(SUFFIX) && Files.isRegularFile(p);
            }).sorted().toList();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: cannot list " + dir, e);
            return List.of();
        }
    }

    /** Every spool file but the one being appended to, oldest first (names sort by creation). */
    private List<Path> sealedFiles() {
        Path current;
        writeLock.lock();
        try {
            current = activePath;
        } finally {
            writeLock.unlock();
        }
        return spoolFiles().stream().filter(p -> !p.equals(current)).toList();
    }

    private long countPending() {
        long n = 0;
        for (Path p : spoolFiles()) {
            try (SpoolFile.Reader r = new SpoolFile.Reader(p)) {
                while (r.next() != null) {
                    n++;
                }
            } catch (IOException e) {
                LOG.log(Level.WARNING, "push spool: cannot read " + p, e);
            }
        }
        return n;
    }

    private static void syncDirectory(Path directory) {
        // Makes a created, renamed or deleted entry durable; not every platform allows it.
        try (FileChannel ch = FileChannel.open(directory, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.FINE, "push spool: cannot fsync directory " + directory, e);
        }
    }
}
