package io.queen.broker.engine;

import io.queen.broker.store.Database;
import io.queen.broker.store.TraceStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * Application trace events attached to messages (broker/DESIGN.md, Management plane): record one,
 * read a message's, read by name, list the names. Every call is scoped to the tenant through the
 * trace's partition.
 */
public final class TraceService {
    /** The worker id every trace is stored with (the reference's literal; clients never send one). */
    public static final String WORKER_ID = "seg-rust";

    public record NamedPage(List<TraceStore.NamedTrace> traces, long total) {
    }

    public record NamesPage(List<TraceStore.TraceName> names, long total) {
    }

    private final Database database;

    public TraceService(Database database) {
        this.database = database;
    }

    /** The trace id, or null when the partition is not the tenant's. */
    public UUID record(UUID tenant, TraceStore.NewTrace trace) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return TraceStore.record(c, tenant, trace);
        }
    }

    /** Oldest first; empty for an unknown message or a partition of another tenant. */
    public List<TraceStore.Trace> ofMessage(UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return TraceStore.ofMessage(c, tenant, partitionId, transactionId);
        }
    }

    public NamedPage byName(UUID tenant, String name, int limit, int offset) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return new NamedPage(TraceStore.byName(c, tenant, name, limit, offset),
                    TraceStore.countByName(c, tenant, name));
        }
    }

    public NamesPage names(UUID tenant, int limit, int offset) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return new NamesPage(TraceStore.names(c, tenant, limit, offset), TraceStore.countNames(c, tenant));
        }
    }
}
