package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.config.JobSettings;
import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.Database;
import io.queen.broker.store.MaintenanceStore;
import io.queen.broker.store.MaintenanceStore.Step;
import io.queen.broker.store.MaintenanceStore.WorkItem;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The retention cycle (RETENTION_INTERVAL, one replica per period, advisory lock 737001), in
 * phases over the work list of 006_log_maintenance, ascending by partition id:
 * <ol>
 *   <li>retention and completed retention of queues with {@code retentionEnabled};</li>
 *   <li>max-wait eviction of queues with {@code maxWaitTimeSeconds}, whatever the cursors;</li>
 *   <li>the log_txns purge, on its own window;</li>
 *   <li>partition cleanup (PARTITION_CLEANUP_DAYS), at most once a minute per replica: its
 *       candidate scan reads every partition, and a window of days needs no 5 s resolution;</li>
 *   <li>metrics retention (METRICS_RETENTION_DAYS).</li>
 * </ol>
 * Each step is its own short transaction over one partition holding at most RETENTION_BATCH_SIZE
 * rows, looped until the step says done. A partition whose step fails is logged and skipped, so
 * one bad partition cannot starve the rest, and a phase that fails does not keep the later phases
 * from running (the run then counts as failed); a lost connection ends the cycle. A partition or
 * queue deleted under the cycle is not a failure: the steps find it gone and answer done, and the
 * cleanup steps over a queue a delete holds. DLQ rows are never touched.
 */
final class RetentionCycle implements Cycle {
    static final String MAX_WAIT_HISTORY_TYPE = "max_wait_time_eviction";
    private static final Logger LOG = Logger.getLogger(RetentionCycle.class.getName());
    private static final long CLEANUP_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Database database;
    private final JobSettings settings;
    private final Ticker ticker;
    private long lastCleanupNanos;
    private boolean cleanedOnce;

    RetentionCycle(Database database, JobSettings settings) {
        this(database, settings, Ticker.SYSTEM);
    }

    /** {@code ticker} decides when the partition cleanup is due again. */
    RetentionCycle(Database database, JobSettings settings, Ticker ticker) {
        this.database = database;
        this.settings = settings;
        this.ticker = ticker;
    }

    /** Counts of one cycle, for its log line. */
    static final class Tally {
        final Set<UUID> queues = new HashSet<>();
        int partitions;
        long segments;
        long frames;
        long evictedSegments;
        long evictedFrames;
        long txns;
        long partitionsCleaned;
        long metricsRows;
        int failedPartitions;

        boolean worked() {
            return segments + evictedSegments + txns + partitionsCleaned + metricsRows > 0 || failedPartitions > 0;
        }

        String summary() {
            return "retention over " + partitions + " partitions of " + queues.size() + " queues: "
                    + segments + " segments (" + frames + " messages) deleted, "
                    + evictedSegments + " segments (" + evictedFrames + " messages) evicted by max wait, "
                    + txns + " log_txns rows purged, " + partitionsCleaned + " empty partitions cleaned up, "
                    + metricsRows + " metrics rows aged out"
                    + (failedPartitions > 0 ? ", " + failedPartitions + " partitions failed" : "");
        }
    }

    @Override
    public Outcome run() throws SQLException {
        return AdvisoryBelt.run(database, AdvisoryBelt.RETENTION, "retention", this::runLocked);
    }

    /** A phase of the cycle; one that fails does not keep the later ones from their turn. */
    @FunctionalInterface
    private interface Phase {
        void run() throws SQLException;
    }

    private Outcome runLocked(Connection c) throws SQLException {
        Tally tally = new Tally();
        SQLException failed = null;
        failed = phase(failed, () -> retain(c, tally));
        if (settings.partitionCleanupEnabled() && cleanupDue()) {
            failed = phase(failed, () -> tally.partitionsCleaned = cleanupPartitions(c));
        }
        failed = phase(failed, () -> tally.metricsRows = ageOutMetrics(c));
        if (failed != null) {
            throw failed; // After the other phases ran: the run still counts as failed.
        }
        return tally.worked() ? Outcome.worked(tally.summary()) : Outcome.idle(tally.summary());
    }

    /** Runs the phase and answers the cycle's first failure so far; a lost connection ends the cycle. */
    private static SQLException phase(SQLException failedSoFar, Phase phase) throws SQLException {
        try {
            phase.run();
            return failedSoFar;
        } catch (SQLException e) {
            if (SqlStates.isConnectionFailure(e)) {
                if (failedSoFar != null) {
                    e.addSuppressed(failedSoFar);
                }
                throw e;
            }
            if (failedSoFar == null) {
                return e;
            }
            failedSoFar.addSuppressed(e);
            return failedSoFar;
        }
    }

    /** Phases 1 to 3 over the work list. */
    void retain(Connection c, Tally tally) throws SQLException {
        List<WorkItem> work = MaintenanceStore.retentionWork(c);
        tally.partitions = work.size();
        int batch = settings.retentionBatchSize();
        for (WorkItem w : work) {
            tally.queues.add(w.queueId());
            try {
                if (w.segmentsDue() && (w.allCutoff() != null || w.completedCutoff() != null)) {
                    Step s;
                    do {
                        s = MaintenanceStore.retentionStep(c, w.partitionId(), w.allCutoff(), w.completedCutoff(),
                                batch, null);
                        tally.segments += s.deleted();
                        tally.frames += s.frames();
                    } while (!s.done() && s.deleted() > 0);
                }
                if (w.segmentsDue() && w.maxWaitCutoff() != null) {
                    Step s;
                    do {
                        s = MaintenanceStore.retentionStep(c, w.partitionId(), w.maxWaitCutoff(), null, batch,
                                MAX_WAIT_HISTORY_TYPE);
                        tally.evictedSegments += s.deleted();
                        tally.evictedFrames += s.frames();
                    } while (!s.done() && s.deleted() > 0);
                }
                if (w.txnsDue()) {
                    Step s;
                    do {
                        s = MaintenanceStore.txnsPurgeStep(c, w.partitionId(), w.txnsCutoff(), batch);
                        tally.txns += s.deleted();
                    } while (!s.done() && s.deleted() > 0);
                }
            } catch (SQLException e) {
                if (SqlStates.isConnectionFailure(e)) {
                    throw e;
                }
                tally.failedPartitions++;
                LOG.warning(() -> "retention of partition " + w.partitionId() + " of queue " + w.queueName()
                        + " failed, skipped this cycle: " + e.getMessage());
            }
        }
    }

    /** Phase 4: partitions deleted. */
    long cleanupPartitions(Connection c) throws SQLException {
        long deleted = 0;
        Step s;
        do {
            s = MaintenanceStore.partitionCleanupStep(c, settings.partitionCleanupDays(),
                    settings.retentionBatchSize());
            deleted += s.deleted();
        } while (!s.done() && s.deleted() > 0);
        lastCleanupNanos = ticker.nanoTime();
        cleanedOnce = true;
        return deleted;
    }

    /** Phase 5: rows deleted from the metrics tables and retention_history. */
    long ageOutMetrics(Connection c) throws SQLException {
        long deleted = 0;
        JsonNode step;
        do {
            step = MaintenanceStore.metricsRetentionStep(c, settings.metricsRetentionDays(),
                    settings.retentionBatchSize());
            long batch = step.path("workerMetrics").asLong() + step.path("queueLagMetrics").asLong()
                    + step.path("queueParkedReplica").asLong() + step.path("systemMetrics").asLong()
                    + step.path("retentionHistory").asLong();
            deleted += batch;
            if (batch == 0) {
                break;
            }
        } while (!step.path("done").asBoolean(true));
        return deleted;
    }

    private boolean cleanupDue() {
        return !cleanedOnce || ticker.nanoTime() - lastCleanupNanos >= CLEANUP_EVERY_NANOS;
    }
}
