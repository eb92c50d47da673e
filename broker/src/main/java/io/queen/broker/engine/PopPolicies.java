package io.queen.broker.engine;

import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Each (queue, group)'s conflation policy as last read, and the registration of a group on first
 * contact (broker/DESIGN.md, Pop path). An entry is re-read after the catalog's TTL, so a group deleted and registered again with another policy (on any broker) is
 * seen within seconds, and registered again here if this broker's pops are the first to come back.
 */
final class PopPolicies {
    /** By "queueId/group". */
    private final TtlCache<String, Policy> policies;

    private record Policy(boolean registered, boolean conflation) {
    }

    /** {@code ticker}: what an entry's age is measured on (the wake hub's, as the pop's deadlines). */
    PopPolicies(Ticker ticker) {
        this.policies = new TtlCache<>(ticker);
    }

    /** Forgets that the group registered on the queue, so its next pop registers it again. */
    void forget(UUID queueId, String group) {
        policies.remove(key(queueId, group));
    }

    /**
     * Whether the group was last seen conflating on the queue, however long ago; false when never
     * read. Asks the database nothing.
     */
    boolean lastSeenConflating(UUID queueId, String group) {
        Policy known = policies.lastRead(key(queueId, group));
        return known != null && known.conflation();
    }

    /**
     * Registers the group on the queue when this broker has not lately (queue-level and discovery
     * pops), with the conflation the pop asks for; returns the policy the group has.
     */
    boolean registered(Connection c, PopService.Request r, UUID queueId) throws SQLException {
        if (Tenants.QUEUE_MODE.equals(r.consumerGroup())) {
            return false; // Queue mode has no group to hold a policy; the route refuses conflation for it.
        }
        String key = key(queueId, r.consumerGroup());
        Policy known = policies.fresh(key);
        if (known != null && known.registered()) {
            return known.conflation();
        }
        boolean stored = LogStore.registerGroup(c, r.tenant(), queueId, r.consumerGroup(), r.subscriptionMode(),
                r.subscriptionFrom(), Boolean.TRUE.equals(r.conflation()));
        policies.put(key, new Policy(true, stored));
        return stored;
    }

    /**
     * The policy for a pop of one named partition. Such pops do not register a group (the
     * reference's rule), except to conflate: a conflating group must be on record so that its
     * other consumers are served the same way.
     */
    boolean pinned(Connection c, PopService.Request r, UUID queueId) throws SQLException {
        if (Tenants.QUEUE_MODE.equals(r.consumerGroup())) {
            return false;
        }
        if (Boolean.TRUE.equals(r.conflation())) {
            return registered(c, r, queueId);
        }
        String key = key(queueId, r.consumerGroup());
        Policy known = policies.fresh(key);
        if (known != null) {
            return known.conflation();
        }
        Boolean stored = LogStore.groupPolicy(c, queueId, r.consumerGroup());
        boolean conflation = Boolean.TRUE.equals(stored);
        policies.put(key, new Policy(stored != null, conflation));
        return conflation;
    }

    private static String key(UUID queueId, String group) {
        return queueId + "/" + group;
    }
}
