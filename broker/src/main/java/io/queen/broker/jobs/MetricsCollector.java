package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.ProcessGauges;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.Database;
import io.queen.broker.store.MaintenanceStore;
import io.queen.broker.store.TimerStore;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * This replica's metrics collector (per replica, never elected: every replica records its own
 * rows). Every tick (one second, or the flush period when shorter) it samples process and pool
 * gauges; every METRICS_FLUSH_MS it writes
 * <ul>
 *   <li>one {@code queen.worker_metrics} row: the request and message counters of
 *       {@link BrokerMetrics} since the previous flush (push, pop, ack requests and messages, ack
 *       successes and failures), free pool slots (idle connections, average and minimum), open
 *       connections, and requests waiting for a connection as the job-queue size. The insert trigger
 *       of 019 adds the counters to {@code worker_metrics_summary};</li>
 *   <li>one {@code queen.system_metrics} row per minute whose JSON holds, per gauge,
 *       {@code {avg, min, max, last}} over the samples: {@code cpu.user_us / system_us} (percent
 *       of one core x 100 over the window, from /proc), {@code memory.rss_bytes},
 *       {@code jvm.heap_used_bytes / threads}, {@code database.pool_size / pool_idle / pool_active /
 *       pool_waiting}, {@code long_polls.parked}, and {@code uptime_seconds}.</li>
 * </ul>
 * A failed flush keeps the counter baseline, so its counts go out with the next one. Every tick it
 * also samples the due timers from SQL (how many are due and unheld, capped, and the oldest one's
 * lateness) into {@link SurfaceMetrics#timerLag}, so /metrics/prometheus serves the sweeper lag
 * without a query per scrape; a failed sample clears it (the gauges go absent, not stale).
 */
final class MetricsCollector implements Cycle {
    private static final Logger LOG = Logger.getLogger(MetricsCollector.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The due count's ceiling: the sample stays a bounded index range scan under any backlog. */
    static final int LAG_CAP = 10_000;

    private final Database database;
    private final BrokerMetrics metrics;
    private final ProcessGauges process = new ProcessGauges();
    private final IntSupplier parked;
    private final String hostname;
    private final int port;
    private final long flushNanos;
    private final Ticker ticker;
    private final long startedNanos;
    private final Map<String, Gauge> gauges = new LinkedHashMap<>();
    private long windowStartNanos;
    private ProcessGauges.CpuTimes windowStartCpu;
    private BrokerMetrics.Counters baseline;
    private int samples;

    MetricsCollector(Database database, BrokerMetrics metrics, IntSupplier parked, String hostname, int port,
                     long flushMs) {
        this(database, metrics, parked, hostname, port, flushMs, Ticker.SYSTEM);
    }

    /** {@code ticker} decides when a window is flushed, measures it and the uptime, and stamps the rows. */
    MetricsCollector(Database database, BrokerMetrics metrics, IntSupplier parked, String hostname, int port,
                     long flushMs, Ticker ticker) {
        this.database = database;
        this.metrics = metrics;
        this.parked = parked;
        this.hostname = hostname;
        this.port = port;
        this.flushNanos = TimeUnit.MILLISECONDS.toNanos(flushMs);
        this.ticker = ticker;
        this.startedNanos = ticker.nanoTime();
        this.windowStartNanos = startedNanos;
        this.windowStartCpu = process.cpuTimes().orElse(null);
        this.baseline = metrics.snapshot();
    }

    static long tickMs(long flushMs) {
        return Math.min(1_000, flushMs);
    }

    /** Minimum, maximum, sum and last value of one gauge over a flush window. */
    private static final class Gauge {
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        double sum;
        double last;
        int count;

        void add(double v) {
            min = Math.min(min, v);
            max = Math.max(max, v);
            sum += v;
            last = v;
            count++;
        }

        double avg() {
            return count == 0 ? 0 : sum / count;
        }
    }

    @Override
    public Outcome run() throws SQLException {
        sample();
        sampleTimerLag();
        if (ticker.nanoTime() - windowStartNanos < flushNanos) {
            return null; // A sample only: nothing to log.
        }
        return flush();
    }

    private void sample() {
        Runtime rt = Runtime.getRuntime();
        process.residentBytes().ifPresent(rss -> gauge("memory.rss_bytes", rss));
        gauge("jvm.heap_used_bytes", rt.totalMemory() - rt.freeMemory());
        gauge("jvm.threads", ManagementFactory.getThreadMXBean().getThreadCount());
        gauge("database.pool_size", database.settings().poolSize());
        gauge("database.pool_idle", database.idleConnections());
        gauge("database.pool_active", database.activeConnections());
        gauge("database.pool_waiting", database.waitingRequests());
        gauge("long_polls.parked", parked.getAsInt());
        samples++;
    }

    private void sampleTimerLag() {
        SurfaceMetrics surfaces = metrics.surfaces();
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            TimerStore.Lag lag = TimerStore.lag(c, LAG_CAP);
            surfaces.timerLag(new SurfaceMetrics.TimerLag(lag.due(), lag.capped(), lag.oldestLateMs()));
        } catch (SQLException | RuntimeException e) {
            if (surfaces.timerLag() != null) {
                LOG.log(Level.WARNING, "timer lag sample failed; the sweeper-lag gauges are absent until one succeeds: "
                        + e.getMessage());
            }
            surfaces.timerLag(null);
        }
    }

    Outcome flush() throws SQLException {
        long now = ticker.nanoTime();
        ProcessGauges.CpuTimes cpu = process.cpuTimes().orElse(null);
        BrokerMetrics.Counters counters = metrics.snapshot();
        BrokerMetrics.Counters d = delta(baseline, counters);
        OffsetDateTime at = OffsetDateTime.ofInstant(ticker.instant(), ZoneOffset.UTC);
        int sampleCount = samples;
        String systemJson = systemJson(cpu, now);
        Gauge idle = gauges.getOrDefault("database.pool_idle", new Gauge());
        Gauge active = gauges.getOrDefault("database.pool_active", new Gauge());
        Gauge waiting = gauges.getOrDefault("database.pool_waiting", new Gauge());
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            boolean written = MaintenanceStore.writeWorkerMetrics(c, new MaintenanceStore.WorkerMetricsRow(hostname, 0,
                    (int) ProcessHandle.current().pid(), at,
                    (int) Math.round(idle.avg()), (int) (idle.count == 0 ? 0 : idle.min),
                    (int) Math.round(maxOf(idle) + maxOf(active)),
                    (int) Math.round(waiting.avg()), (int) maxOf(waiting),
                    d.pushRequests(), d.popRequests(), d.ackRequests(),
                    d.pushMessages(), d.popMessages(), d.ackMessages(), d.ackSuccess(), d.ackFailed()));
            if (written) {
                baseline = counters;
            }
            MaintenanceStore.writeSystemMetrics(c, at, hostname, port, "worker-0", sampleCount, systemJson);
        } finally {
            gauges.clear();
            samples = 0;
            windowStartNanos = now;
            windowStartCpu = cpu;
        }
        return Outcome.idle("metrics of " + hostname + ":" + port + " flushed: " + d.pushMessages() + " pushed, "
                + d.popMessages() + " popped, " + d.ackMessages() + " acked since the last flush, "
                + sampleCount + " samples");
    }

    private String systemJson(ProcessGauges.CpuTimes cpu, long now) {
        ObjectNode root = MAPPER.createObjectNode();
        if (cpu != null && windowStartCpu != null) {
            double windowMicros = Math.max(1, TimeUnit.NANOSECONDS.toMicros(now - windowStartNanos));
            // Percent of one core, times 100 (the unit the reference uses for these keys).
            double user = (cpu.userMicros() - windowStartCpu.userMicros()) / windowMicros * 10_000;
            double system = (cpu.systemMicros() - windowStartCpu.systemMicros()) / windowMicros * 10_000;
            ObjectNode cpuNode = root.putObject("cpu");
            put(cpuNode, "user_us", user, user, user, user);
            put(cpuNode, "system_us", system, system, system, system);
        }
        for (Map.Entry<String, Gauge> e : gauges.entrySet()) {
            String[] path = e.getKey().split("\\.", 2);
            ObjectNode group = root.has(path[0]) ? (ObjectNode) root.get(path[0]) : root.putObject(path[0]);
            Gauge g = e.getValue();
            put(group, path[1], g.avg(), g.min, g.max, g.last);
        }
        root.put("uptime_seconds", TimeUnit.NANOSECONDS.toSeconds(now - startedNanos));
        return root.toString();
    }

    private void gauge(String key, double value) {
        gauges.computeIfAbsent(key, k -> new Gauge()).add(value);
    }

    private static double maxOf(Gauge g) {
        return g.count == 0 ? 0 : g.max;
    }

    private static void put(ObjectNode parent, String key, double avg, double min, double max, double last) {
        parent.putObject(key)
                .put("avg", Math.round(avg * 100) / 100.0)
                .put("min", min)
                .put("max", max)
                .put("last", last);
    }

    private static BrokerMetrics.Counters delta(BrokerMetrics.Counters from, BrokerMetrics.Counters to) {
        return new BrokerMetrics.Counters(
                to.httpRequests() - from.httpRequests(),
                to.pushRequests() - from.pushRequests(), to.pushMessages() - from.pushMessages(),
                to.popRequests() - from.popRequests(), to.popMessages() - from.popMessages(),
                to.popEmpty() - from.popEmpty(),
                to.ackRequests() - from.ackRequests(), to.ackMessages() - from.ackMessages(),
                to.ackSuccess() - from.ackSuccess(), to.ackFailed() - from.ackFailed());
    }
}
