package io.queen.broker.engine;

import io.queen.broker.engine.wake.HotList;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.LogStore;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Which partitions of a queue a pop tries, and in which order (broker/DESIGN.md, Pop path): the
 * hot list's marked partitions first, then the database's candidate scan when the ring cannot be
 * trusted to be complete. Each partition is claimed through the call's {@link PopClaim}; the ring
 * gets back what was taken and not tried.
 */
final class PopQueueWalk {
    private final QueueCatalog catalog;
    private final WakeHub wake;

    PopQueueWalk(QueueCatalog catalog, WakeHub wake) {
        this.catalog = catalog;
        this.wake = wake;
    }

    /**
     * A queue-level pop: the hot list's marked partitions first (oldest mark first, a few at a time),
     * then the database scan when the ring cannot be trusted to be complete. A pop that answers at
     * once (no wait) always scans before answering empty, so its answer is exact; a long-poll scans
     * when the ring is dirty or its last scan was cut at the limit, and otherwise lets one scan per
     * ring and second stand for all of the ring's pops (the idle re-check). Only one long-poll scans
     * a ring at a time; the others park and are woken for what it leaves in the ring.
     */
    void claimQueue(Connection c, PopService.Request r, UUID queueId, HotList.Ring ring, PopClaim claim)
            throws SQLException {
        int cap = claim.cap();
        int checkout = (int) Math.max(2, Math.min((long) cap * 2, 64));
        while (!claim.done()) {
            List<String> marked = ring.take(checkout);
            if (marked.isEmpty()) {
                break;
            }
            for (int i = 0; i < marked.size(); i++) {
                if (claim.done()) {
                    marked.subList(i, marked.size()).forEach(ring::add);
                    break;
                }
                String name = marked.get(i);
                try {
                    UUID pid = markedPartitionId(c, r, queueId, name);
                    if (pid != null && tryMarked(c, r, pid, name, claim) && r.autoAck() && claim.budgetSpent()) {
                        ring.add(name); // No lease holds it back: what the budget left is claimable now.
                    }
                } catch (SQLException | RuntimeException e) {
                    marked.subList(i, marked.size()).forEach(ring::add); // untried: still believed pending
                    throw e;
                }
            }
        }
        if (claim.done() || (claim.claimed() > 0 && r.waitForMessages())) {
            return;
        }
        boolean mustScan = !r.waitForMessages() || ring.needsScan()
                || ring.sinceLastScanNanos() >= PopService.IDLE_RECHECK_MS * 1_000_000L;
        if (!mustScan) {
            return;
        }
        boolean owns = ring.beginScan();
        if (!owns && r.waitForMessages()) {
            return; // Another pop is scanning this ring; it leaves what it finds in the ring and wakes us.
        }
        long epoch = ring.scanEpoch();
        try {
            List<String> unclaimed = new ArrayList<>();
            boolean full = claimFromScan(c, r, queueId, r.queue(), claim, unclaimed);
            ring.endScan(epoch, unclaimed, full, owns);
            if (!unclaimed.isEmpty()) {
                wake.wakeGroup(r.tenant(), r.queue(), r.consumerGroup());
            }
        } catch (SQLException | RuntimeException e) {
            ring.abortScan(owns);
            throw e;
        }
    }

    /**
     * Scans the queue's candidates (pending, lease-free, random order) and claims them in turn.
     * Candidates not tried go to {@code unclaimed} (when given); returns whether the scan was cut at
     * its limit.
     */
    boolean claimFromScan(Connection c, PopService.Request r, UUID queueId, String queueName, PopClaim claim,
                          List<String> unclaimed) throws SQLException {
        int cap = claim.cap();
        int limit = cap >= 128 ? 512 : Math.max(64, Math.min(cap * 4, 512));
        List<LogStore.Candidate> candidates = LogStore.candidates(c, queueId, r.consumerGroup(), limit);
        for (int i = 0; i < candidates.size(); i++) {
            LogStore.Candidate cand = candidates.get(i);
            if (claim.done()) {
                if (unclaimed != null) {
                    candidates.subList(i, candidates.size()).forEach(x -> unclaimed.add(x.partitionName()));
                }
                break;
            }
            claim.tryPartition(c, queueName, cand.partitionId(), cand.partitionName());
        }
        return candidates.size() >= limit;
    }

    /** The id of a marked partition: from the catalog when this broker pushed to it lately, else looked up. */
    private UUID markedPartitionId(Connection c, PopService.Request r, UUID queueId, String name) throws SQLException {
        LogStore.Provisioned cached = catalog.cached(r.tenant(), r.queue(), name);
        return cached != null ? cached.partitionId() : LogStore.partitionId(c, queueId, name);
    }

    /**
     * A claim on a partition taken from the hot list, which may have been deleted since it was
     * marked: that reads as nothing to claim. Returns whether it yielded messages.
     */
    private boolean tryMarked(Connection c, PopService.Request r, UUID partitionId, String partitionName,
                              PopClaim claim) throws SQLException {
        try {
            return claim.tryPartition(c, r.queue(), partitionId, partitionName);
        } catch (SQLException e) {
            if (!SqlStates.isRowGone(e)) {
                throw e;
            }
            catalog.evict(r.tenant(), r.queue());
            return false;
        }
    }
}
