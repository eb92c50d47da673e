package io.queen.broker.engine;

import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;

/**
 * The queue's minPopWaitTime (the reference broker's semantics; broker/DESIGN.md, Pop path): a
 * queue-level long-poll for more than one message that finds the queue non-empty but short of its
 * batch waits, up to that many ms and never past its own deadline, for the batch to fill, then
 * claims once, so one claim carries more messages. It waits before claiming, holding no lease and
 * no connection, and stops early on the first commit that fills the batch. An empty queue is the
 * long-poll's business, and a pop that does not wait is never held.
 */
final class PopFillHold {
    private final Database database;
    private final QueueCatalog catalog;
    private final WakeHub wake;
    private final PopPolicies policies;
    /** Each queue's minPopWaitTime as last read, so queues without it (the default) cost no query. */
    private final TtlCache<UUID, Integer> minPopWaitMs;

    PopFillHold(Database database, QueueCatalog catalog, WakeHub wake, PopPolicies policies) {
        this.database = database;
        this.catalog = catalog;
        this.wake = wake;
        this.policies = policies;
        this.minPopWaitMs = new TtlCache<>(wake.ticker());
    }

    /**
     * Returns once the pop of a queue should claim: at once unless the hold applies, else when the
     * batch can fill, the queue's setting or {@code deadline} (a reading of the hub's {@link io.queen.broker.lifecycle.Ticker}) is
     * reached, or the hub closes.
     */
    void hold(PopService.Request r, long deadline) throws SQLException, InterruptedException {
        if (!r.waitForMessages() || r.batch() <= 1 || wake.closed() || Boolean.TRUE.equals(r.conflation())) {
            return;
        }
        LogStore.Provisioned q = catalog.cached(r.tenant(), r.queue(), null);
        if (q == null) {
            return; // Not resolved yet on this broker: the attempt resolves it; later rounds can hold.
        }
        if (policies.lastSeenConflating(q.queueId(), r.consumerGroup())) {
            return; // One message per partition: a fuller batch is not what it waits for.
        }
        Integer known = minPopWaitMs.fresh(q.queueId());
        if (known != null && known <= 0) {
            return;
        }
        long seen = wake.version(r.tenant(), r.queue());
        LogStore.Fill fill = fill(q.queueId(), r);
        if (fill.minPopWaitMs() <= 0 || fill.claimable() == 0 || fill.claimable() >= r.batch()) {
            return;
        }
        long end = Math.min(deadline, wake.ticker().nanoTime() + fill.minPopWaitMs() * 1_000_000L);
        while (true) {
            long leftMs = (end - wake.ticker().nanoTime()) / 1_000_000L;
            if (leftMs <= 0 || wake.closed()) {
                return;
            }
            wake.awaitChange(r.tenant(), r.queue(), seen, leftMs);
            if (Thread.interrupted()) {
                throw new InterruptedException("pop interrupted");
            }
            seen = wake.version(r.tenant(), r.queue());
            fill = fill(q.queueId(), r);
            if (fill.claimable() == 0 || fill.claimable() >= r.batch()) {
                return; // Full, or taken by another consumer meanwhile.
            }
        }
    }

    private LogStore.Fill fill(UUID queueId, PopService.Request r) throws SQLException {
        LogStore.Fill fill;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            fill = LogStore.fill(c, queueId, r.consumerGroup(), r.batch());
        }
        minPopWaitMs.put(queueId, fill.minPopWaitMs());
        return fill;
    }
}
