package io.queen.broker.engine.dedup;

import java.util.UUID;
import java.util.logging.Logger;

/** What the budget gave up, said at most once a minute per kind, under the cache's logger. */
final class BudgetLog {
    private static final Logger LOG = Logger.getLogger(DedupCache.class.getName());
    private static final long INTERVAL_MS = 60_000;

    private final long budgetMb;
    /** Messages compacted since the last note about it. */
    private long compactedSinceNote;
    private long lastNoteMs;
    /** Messages dropped for the budget, not by age, since the last warning about it. */
    private long droppedSinceWarning;
    private UUID lastDropped;
    private long lastWarningMs;

    BudgetLog(long budgetMb) {
        this.budgetMb = budgetMb;
    }

    /** Compaction costs nothing for new messages, but a duplicate of a compacted one is confirmed in SQL. */
    void compacted(long messages, Usage usage) {
        compactedSinceNote += messages;
        long now = System.currentTimeMillis();
        if (now - lastNoteMs >= INTERVAL_MS) {
            LOG.info(String.format("dedup cache at its budget (QUEEN_DEDUP_CACHE_MB=%,d): %,d messages' hashes kept as "
                            + "fingerprints since the last note (%,d exact, %,d as fingerprints now); a duplicate of "
                            + "one is confirmed in the database", budgetMb, compactedSinceNote, usage.exact(),
                    usage.compacted()));
            lastNoteMs = now;
            compactedSinceNote = 0;
        }
    }

    /**
     * What leaves for the budget may still be inside its queue's dedup window, and a push to that
     * partition then probes the sidecar rows in SQL instead, a cost that grows with the window's
     * content: in a bench of 1,000,000-message rounds over 10 partitions, past a 2,000,000-entry
     * budget (before fingerprints), pushes fell from 70,000 to 1,000-3,500 msg/s.
     */
    void dropped(long messages, UUID lastPartition, Usage usage) {
        droppedSinceWarning += messages;
        lastDropped = lastPartition;
        long now = System.currentTimeMillis();
        if (now - lastWarningMs >= INTERVAL_MS) {
            LOG.warning(String.format("dedup cache full (QUEEN_DEDUP_CACHE_MB=%,d, %,d messages held): dropped %,d "
                            + "messages' hashes that may still be inside their dedup window, the last of partition %s; "
                            + "pushes with a transactionId to those partitions probe the database for them. Raise "
                            + "QUEEN_DEDUP_CACHE_MB (and the heap) or shorten dedupWindowSeconds.",
                    budgetMb, usage.held(), droppedSinceWarning, lastDropped));
            lastWarningMs = now;
            droppedSinceWarning = 0;
        }
    }
}
