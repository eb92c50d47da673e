package io.queen.broker.engine;

import io.queen.broker.store.AdminStore;
import io.queen.broker.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Deliberate cursor moves of a consumer group (broker/DESIGN.md, Management plane): seek a queue or
 * one partition to its end or to a timestamp, and move the group's subscription timestamp. Each
 * operation is one procedure call, so the cursor writes, the watermark delete and the hot-list
 * repair commit together.
 */
public final class SeekService {
    private final Database database;
    private final CommitListener listener;

    public SeekService(Database database, CommitListener listener) {
        this.database = database;
        this.listener = listener;
    }

    /** Partitions seeked; 0 when the queue is unknown to the tenant or has no partitions. */
    public int seekQueue(UUID tenant, String group, String queue, boolean toEnd, Instant timestamp)
            throws SQLException {
        List<String> partitions;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            partitions = AdminStore.seekQueue(c, tenant, group, queue, toEnd, timestamp);
        }
        // A backward seek makes messages pending without a push: wake parked pops as a push would.
        for (String partition : partitions) {
            listener.committed(tenant, queue, partition);
        }
        return partitions.size();
    }

    /** False when the partition is unknown to the tenant. */
    public boolean seekPartition(UUID tenant, String group, String queue, String partition, boolean toEnd,
                                 Instant timestamp) throws SQLException {
        boolean found;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            found = AdminStore.seekPartition(c, tenant, group, queue, partition, toEnd, timestamp);
        }
        if (found) {
            listener.committed(tenant, queue, partition);
        }
        return found;
    }

    /** Metadata rows updated; existing cursors are not moved. */
    public int updateSubscription(UUID tenant, String group, Instant timestamp) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return AdminStore.updateSubscription(c, tenant, group, timestamp);
        }
    }
}
