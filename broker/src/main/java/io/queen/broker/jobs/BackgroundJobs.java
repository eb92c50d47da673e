package io.queen.broker.jobs;

import io.queen.broker.config.JobSettings;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.store.Database;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;
import java.util.logging.Logger;

/**
 * The broker's background jobs (broker/DESIGN.md, Background cycles), started once the server listens:
 * <ul>
 *   <li>cluster singletons, elected through {@code queen.maintenance_leases}: retention
 *       (RETENTION_INTERVAL, task {@code retention}), the stats reconciler (STATS_INTERVAL_MS,
 *       {@code stats_refresh}) and the retained-bytes lane (RETAINED_BYTES_INTERVAL_MS,
 *       {@code retained_bytes});</li>
 *   <li>per replica: the metrics collector (METRICS_FLUSH_MS) writing worker_metrics and
 *       system_metrics.</li>
 * </ul>
 * Each runs on its own named daemon thread ({@code queen-job-<name>}); its runs and failed runs
 * are counted per name ({@code retention}, {@code stats-refresh}, {@code retained-bytes},
 * {@code metrics}) in {@link BrokerMetrics}.
 */
public final class BackgroundJobs implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(BackgroundJobs.class.getName());

    public static final String RETENTION = "retention";
    public static final String STATS_REFRESH = "stats_refresh";
    public static final String RETAINED_BYTES = "retained_bytes";

    private final List<JobLoop> loops;

    private BackgroundJobs(List<JobLoop> loops) {
        this.loops = loops;
    }

    /**
     * @param metrics this broker's request counters, flushed to worker_metrics
     * @param parked  pops parked on this replica right now, for the metrics
     * @param port    the port this broker listens on, which tells its metrics rows apart
     */
    public static BackgroundJobs start(JobSettings settings, Database database, BrokerMetrics metrics,
                                       IntSupplier parked, int port) {
        String holder = settings.serverId() + "#" + ProcessHandle.current().pid() + "#"
                + String.format(Locale.ROOT, "%04x", ThreadLocalRandom.current().nextInt(0x10000));
        long floor = settings.floorMs();
        List<JobLoop> loops = new ArrayList<>();
        loops.add(singleton(database, RETENTION, settings.retentionIntervalMs(), floor, holder,
                new RetentionCycle(database, settings), metrics));
        loops.add(singleton(database, STATS_REFRESH, settings.statsIntervalMs(), floor, holder,
                new StatsRefreshCycle(database), metrics));
        loops.add(singleton(database, RETAINED_BYTES, settings.retainedBytesIntervalMs(), floor, holder,
                new RetainedBytesCycle(database), metrics));
        loops.add(new JobLoop("metrics", MetricsCollector.tickMs(settings.metricsFlushMs()), Turn.EVERY_TIME,
                new MetricsCollector(database, metrics, parked, settings.serverId(), port, settings.metricsFlushMs()),
                metrics));
        loops.forEach(JobLoop::start);
        LOG.info(() -> "background jobs started as " + holder + ": retention every " + settings.retentionIntervalMs()
                + " ms (batch " + settings.retentionBatchSize() + ", partition cleanup "
                + (settings.partitionCleanupEnabled() ? "after " + settings.partitionCleanupDays() + " days" : "off")
                + "), stats every " + settings.statsIntervalMs() + " ms, retained bytes every "
                + settings.retainedBytesIntervalMs() + " ms, metrics flush every " + settings.metricsFlushMs()
                + " ms (kept " + settings.metricsRetentionDays() + " days)");
        return new BackgroundJobs(List.copyOf(loops));
    }

    private static JobLoop singleton(Database database, String task, long periodMs, long floorMs, String holder,
                                     Cycle cycle, BrokerMetrics metrics) {
        return new JobLoop(task.replace('_', '-'), LeaseTurn.pollMs(periodMs, floorMs),
                new LeaseTurn(database, task, periodMs, holder), cycle, metrics);
    }

    /** Stops every loop after its current run. Call before the pool closes. */
    @Override
    public void close() {
        loops.forEach(JobLoop::signalStop);
        loops.forEach(JobLoop::close);
        LOG.info("background jobs stopped");
    }
}
