package io.queen.broker.engine;

import io.queen.broker.store.Database;
import io.queen.broker.store.TraceStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Application trace events attached to messages (broker/DESIGN.md, Management plane): record one,
 * read a message's, read by name, list the names. Every call is scoped to the tenant through the
 * trace's partition.
 */
public final class TraceService {
    /** The worker id every trace is stored with (the reference's literal; clients never send one). */
    static final String WORKER_ID = "seg-rust";

    /** What a trace write records; trace data travels as JSON text both ways. */
    public record NewTrace(UUID partitionId, String transactionId, String consumerGroup, String eventType,
                           String dataJson, List<String> names) {
    }

    /** One trace event of a message. */
    public record Trace(UUID id, String eventType, String dataJson, String consumerGroup, String workerId,
                        Instant createdAt, List<String> names) {
    }

    /** One trace event found by name, with the message and queue it belongs to. */
    public record NamedTrace(UUID id, String transactionId, UUID partitionId, String eventType, String dataJson,
                             String consumerGroup, String workerId, Instant createdAt, String queue,
                             String partition, List<String> names) {
    }

    public record TraceName(String name, long traceCount, long messageCount, Instant lastSeen) {
    }

    public record NamedPage(List<NamedTrace> traces, long total) {
    }

    public record NamesPage(List<TraceName> names, long total) {
    }

    private final Database database;

    public TraceService(Database database) {
        this.database = database;
    }

    /** The trace id, or null when the partition is not the tenant's. */
    public UUID record(UUID tenant, NewTrace t) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return TraceStore.record(c, tenant, new TraceStore.NewTrace(t.partitionId(), t.transactionId(),
                    t.consumerGroup(), t.eventType(), t.dataJson(), WORKER_ID, t.names()));
        }
    }

    /** Oldest first; empty for an unknown message or a partition of another tenant. */
    public List<Trace> ofMessage(UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return TraceStore.ofMessage(c, tenant, partitionId, transactionId).stream().map(t -> new Trace(t.id(),
                    t.eventType(), t.dataJson(), t.consumerGroup(), t.workerId(), t.createdAt(), t.names())).toList();
        }
    }

    public NamedPage byName(UUID tenant, String name, int limit, int offset) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            List<NamedTrace> traces = TraceStore.byName(c, tenant, name, limit, offset).stream().map(t ->
                    new NamedTrace(t.id(), t.transactionId(), t.partitionId(), t.eventType(), t.dataJson(),
                            t.consumerGroup(), t.workerId(), t.createdAt(), t.queue(), t.partition(), t.names()))
                    .toList();
            return new NamedPage(traces, TraceStore.countByName(c, tenant, name));
        }
    }

    public NamesPage names(UUID tenant, int limit, int offset) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            List<TraceName> names = TraceStore.names(c, tenant, limit, offset).stream()
                    .map(n -> new TraceName(n.name(), n.traceCount(), n.messageCount(), n.lastSeen())).toList();
            return new NamesPage(names, TraceStore.countNames(c, tenant));
        }
    }
}
