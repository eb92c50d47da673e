package io.queen.broker.engine;

import io.queen.broker.store.ConsumerGroupStore;
import io.queen.broker.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
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

    private final Database database;
    private final PopService pop;
    private final CommitListener listener;

    public ConsumerGroupAdminService(Database database, PopService pop, CommitListener listener) {
        this.database = database;
        this.pop = pop;
        this.listener = listener;
    }

    /** Lagging when its oldest unconsumed message is over 300 s old, else Stable once it consumed anything, else Dead. */
    public static String state(int maxTimeLagSeconds, long maxTotalConsumed) {
        if (maxTimeLagSeconds > LAGGING_AFTER_SECONDS) {
            return "Lagging";
        }
        return maxTotalConsumed > 0 ? "Stable" : "Dead";
    }

    public List<ConsumerGroupStore.GroupOnQueue> groups(UUID tenant) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.groups(c, tenant);
        }
    }

    public List<ConsumerGroupStore.LaggingCursor> lagging(UUID tenant, int minLagSeconds) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.lagging(c, tenant, minLagSeconds);
        }
    }

    /** The group's cursors, ordered by queue then partition; empty when the group has none. */
    public List<ConsumerGroupStore.GroupCursor> cursors(UUID tenant, String group) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return ConsumerGroupStore.cursors(c, tenant, group);
        }
    }

    /** @param queue null = every queue of the tenant */
    public ConsumerGroupStore.Deletion delete(UUID tenant, String group, String queue, boolean deleteMetadata)
            throws SQLException {
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
        return d;
    }
}
