package io.queen.broker.engine;

import io.queen.broker.store.ConsumerGroupStore;
import io.queen.broker.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * Consumer-group management (broker/DESIGN.md, Management plane): the listing with lag, the lagging
 * cursors, one group's cursors, and the delete of a group on every queue or on one. A delete is one
 * procedure call, so the cursor, watermark and registration deletes and the hot-list repair commit
 * together; the next pop of the group re-seeds its cursors from its subscription.
 */
public final class ConsumerGroupAdminService {
    private static final Logger LOG = Logger.getLogger(ConsumerGroupAdminService.class.getName());

    /** A group whose oldest unconsumed message is older than this is Lagging (reference). */
    static final int LAGGING_AFTER_SECONDS = 300;

    /**
     * One (group, queue) with its lag and {@link #state}; the subscription fields are null when the
     * group never registered on the queue.
     */
    public record GroupOnQueue(String group, String queue, int cursors, int partitionsWithLag, long totalLag,
                               int maxTimeLagSeconds, String state, String subscriptionMode,
                               Instant subscriptionTimestamp, Instant subscriptionCreatedAt, boolean conflation) {
    }

    /** One cursor whose oldest unconsumed segment is older than the threshold. */
    public record LaggingCursor(String group, String queue, String partition, UUID partitionId, String workerId,
                                long offsetLag, int timeLagSeconds, Instant oldestUnconsumedAt) {
    }

    /** One cursor of a group, with the group's conflation policy on its queue. */
    public record GroupCursor(String queue, boolean conflation, String partition, String workerId,
                              long totalConsumed, long offsetLag, int timeLagSeconds, boolean leaseActive) {
    }

    private final Database database;
    private final PopService pop;
    private final CommitListener listener;

    public ConsumerGroupAdminService(Database database, PopService pop, CommitListener listener) {
        this.database = database;
        this.pop = pop;
        this.listener = listener;
    }

    /** Lagging when its oldest unconsumed message is over 300 s old, else Stable once it consumed anything, else Dead. */
    static String state(int maxTimeLagSeconds, long maxTotalConsumed) {
        if (maxTimeLagSeconds > LAGGING_AFTER_SECONDS) {
            return "Lagging";
        }
        return maxTotalConsumed > 0 ? "Stable" : "Dead";
    }

    public List<GroupOnQueue> groups(UUID tenant) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.groups(c, tenant).stream().map(g -> new GroupOnQueue(g.group(), g.queue(),
                    g.cursors(), g.partitionsWithLag(), g.totalLag(), g.maxTimeLagSeconds(),
                    state(g.maxTimeLagSeconds(), g.maxTotalConsumed()), g.subscriptionMode(),
                    g.subscriptionTimestamp(), g.subscriptionCreatedAt(), g.conflation())).toList();
        }
    }

    public List<LaggingCursor> lagging(UUID tenant, int minLagSeconds) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.lagging(c, tenant, minLagSeconds).stream().map(l -> new LaggingCursor(
                    l.group(), l.queue(), l.partition(), l.partitionId(), l.workerId(), l.offsetLag(),
                    l.timeLagSeconds(), l.oldestUnconsumedAt())).toList();
        }
    }

    /** The group's cursors, ordered by queue then partition; empty when the group has none. */
    public List<GroupCursor> cursors(UUID tenant, String group) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.cursors(c, tenant, group).stream().map(g -> new GroupCursor(g.queue(),
                    g.conflation(), g.partition(), g.workerId(), g.totalConsumed(), g.offsetLag(),
                    g.timeLagSeconds(), g.leaseActive())).toList();
        }
    }

    /**
     * The number of cursors deleted.
     *
     * @param queue null = every queue of the tenant
     */
    public int delete(UUID tenant, String group, String queue, boolean deleteMetadata) throws SQLException {
        ConsumerGroupStore.Deletion d;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            d = ConsumerGroupStore.delete(c, tenant, group, queue, deleteMetadata);
        }
        if (deleteMetadata) {
            // The registration row is gone: the next pop must register the group again.
            for (UUID queueId : d.queueIds()) {
                pop.forgetGroup(queueId, group);
            }
        }
        // Without cursors every retained message is pending again for the group: wake its parked pops.
        for (String repaired : d.repairedQueues()) {
            listener.committed(tenant, repaired, null);
        }
        LOG.info(() -> "consumer group " + group + " deleted on " + (queue == null ? "every queue" : "queue " + queue)
                + " of tenant " + tenant + ": " + d.deletedPartitions() + " cursors, queues " + d.repairedQueues()
                + (deleteMetadata ? ", registration removed" : ""));
        return d.deletedPartitions();
    }
}
