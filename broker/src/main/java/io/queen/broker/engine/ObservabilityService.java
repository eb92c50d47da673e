package io.queen.broker.engine;

import io.queen.broker.store.AnalyticsStore;
import io.queen.broker.store.Database;
import io.queen.broker.store.ObservabilityStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Locale;
import java.util.UUID;

/**
 * The read side of the management plane (broker/DESIGN.md, Management plane): status, analytics and the
 * database-backed metrics. Every reader returns the JSON document its SQL function built; the
 * tenant-scoped ones take the caller's tenant, the cell-wide ones take none. One pooled connection
 * per call, autocommit; everything reads except {@link #refreshStats()}.
 */
public final class ObservabilityService {

    /** A time window, from inclusive to inclusive. */
    public record Window(Instant from, Instant to) {
    }

    /** Optional narrowing to one queue name, namespace or task; null means any. */
    public record Scope(String queue, String namespace, String task) {
    }

    @FunctionalInterface
    private interface Read {
        String on(Connection c) throws SQLException;
    }

    private final Database database;

    public ObservabilityService(Database database) {
        this.database = database;
    }

    /** Cell-wide summary behind GET /api/v1/status. */
    public String status(Window w, Scope s) throws SQLException {
        return read(c -> ObservabilityStore.status(c, w.from(), w.to(), s.queue(), s.namespace(), s.task()));
    }

    public String statusQueues(UUID tenant, Scope s, int limit, int offset) throws SQLException {
        return read(c -> ObservabilityStore.statusQueues(c, tenant, s.queue(), s.namespace(), s.task(), limit, offset));
    }

    /** Null when the tenant has no such queue. */
    public String queueDetail(UUID tenant, String queue) throws SQLException {
        return read(c -> ObservabilityStore.queueDetail(c, tenant, queue));
    }

    /** @param interval minute, hour or day */
    public String messageVolume(UUID tenant, Window w, String interval, Scope s) throws SQLException {
        return read(c -> ObservabilityStore.messageVolume(c, tenant, w.from(), w.to(), interval,
                s.queue(), s.namespace(), s.task()));
    }

    public String systemMetrics(Window w, String hostname, String workerId) throws SQLException {
        return read(c -> ObservabilityStore.systemMetrics(c, w.from(), w.to(), hostname, workerId));
    }

    public String workerMetrics(Window w, String queue, String hostname, Integer workerId) throws SQLException {
        return read(c -> ObservabilityStore.workerMetrics(c, w.from(), w.to(), queue, hostname, workerId));
    }

    public String queueLag(UUID tenant, Window w, String queue) throws SQLException {
        return read(c -> ObservabilityStore.queueLag(c, tenant, w.from(), w.to(), queue));
    }

    public String queueOps(UUID tenant, Window w, String queue) throws SQLException {
        return read(c -> ObservabilityStore.queueOps(c, tenant, w.from(), w.to(), queue));
    }

    public String parkedReplicas(UUID tenant, Window w, String queue) throws SQLException {
        return read(c -> ObservabilityStore.parkedReplicas(c, tenant, w.from(), w.to(), queue));
    }

    public String retention(UUID tenant, Window w, String queue) throws SQLException {
        return read(c -> ObservabilityStore.retention(c, tenant, w.from(), w.to(), queue));
    }

    /** The retention answer with a per-group split ({@code rows}) by namespace, task or queue. */
    public String retention(UUID tenant, Window w, String queue, WorkloadReport.GroupBy groupBy) throws SQLException {
        return read(c -> ObservabilityStore.retentionGrouped(c, tenant, w.from(), w.to(), queue,
                groupBy.name().toLowerCase(Locale.ROOT)));
    }

    /**
     * The workload report of the tenant's queues over the window.
     *
     * @throws IllegalArgumentException when the window would need an unreasonable number of buckets
     */
    public String workload(UUID tenant, Window w, WorkloadReport.GroupBy groupBy, WorkloadReport.Filter filter)
            throws SQLException {
        return read(c -> {
            int minutes = AnalyticsStore.bucketMinutes(c, w.from(), w.to());
            return WorkloadReport.build(w.from(), w.to(), minutes, groupBy, filter, AnalyticsStore.queuesNow(c, tenant),
                    AnalyticsStore.queueBuckets(c, tenant, w.from(), w.to(), minutes)).toString();
        });
    }

    /** Error signatures of one queue's newest {@code limit} dead letters. */
    public String deadLetterSignatures(UUID tenant, String queue, int limit) throws SQLException {
        return read(c -> AnalyticsStore.deadLetterSignatures(c, tenant, queue, limit));
    }

    /** Partitions written recently, per queue of the tenant; null filters are none, '' selects the unset label. */
    public String partitionLiveness(UUID tenant, String queue, String namespace, String task, int limit)
            throws SQLException {
        return read(c -> AnalyticsStore.partitionLiveness(c, tenant, queue, namespace, task, limit));
    }

    public String postgresStats() throws SQLException {
        return read(ObservabilityStore::postgresStats);
    }

    /** The cluster totals, per-queue minute figures and dead-letter depth of the Prometheus exposition. */
    public String prometheusFamilies() throws SQLException {
        return read(ObservabilityStore::prometheusFamilies);
    }

    /** Runs the stats refresh now instead of at the next cycle; returns its row counts as JSON. */
    public String refreshStats() throws SQLException {
        return read(ObservabilityStore::refreshStats);
    }

    private String read(Read read) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return read.on(c);
        }
    }
}
