package io.queen.broker.engine.dedup;

import java.util.Map;
import java.util.UUID;

/**
 * The cache's heap budget (QUEEN_DEDUP_CACHE_MB) and what is given up when a write passes it:
 * first exactness (older segments become fingerprints), and only then whole partitions, least
 * recently used first. A push to a dropped partition probes its whole window in SQL, which is the
 * cost the cache exists to avoid.
 */
final class Budget {
    /** A compaction frees memory down to this share of the budget, so it does not run on every write. */
    static final double COMPACT_TO = 0.9;

    private final long maxBytes;
    private final Usage usage;
    private final BudgetLog log;

    /** @param maxEntries the budget, in exact messages of {@link Usage#BYTES_PER_ENTRY} bytes each */
    Budget(long maxEntries, Usage usage) {
        this.maxBytes = maxEntries * Usage.BYTES_PER_ENTRY;
        this.usage = usage;
        this.log = new BudgetLog(Math.round(maxBytes / (1024.0 * 1024)));
    }

    /** The budget in messages for {@code megabytes} of heap; 0 for none. */
    static long entriesFor(long megabytes) {
        return megabytes * 1024 * 1024 / Usage.BYTES_PER_ENTRY;
    }

    /** False for a budget of 0: nothing is cached and every probe runs in SQL. */
    boolean enabled() {
        return maxBytes != 0;
    }

    boolean exceeded() {
        return usage.bytes() > maxBytes;
    }

    /**
     * Over budget: first compacts the exact segments of the least recently used partitions, each
     * keeping its newest segment exact, down to {@link #COMPACT_TO} of the budget; then, if
     * fingerprints alone are too many, drops whole partitions, least recently used first. The
     * partition just written, when it is the only one, loses its oldest content instead.
     */
    void relieve(Blocks blocks, Block current) {
        long target = (long) (maxBytes * COMPACT_TO);
        long before = usage.exact();
        for (Block b : blocks.leastRecentlyUsedFirst()) {
            if (usage.bytes() <= target) {
                break;
            }
            if (b.compactable()) {
                b.compact();
            }
        }
        if (before > usage.exact()) {
            log.compacted(before - usage.exact(), usage);
        }
        long held = usage.held();
        UUID evicted = null;
        while (usage.bytes() > maxBytes && !blocks.isEmpty()) {
            Map.Entry<UUID, Block> eldest = blocks.eldest();
            evicted = eldest.getKey();
            if (eldest.getValue() == current && blocks.size() == 1) {
                current.dropOldest();
            } else {
                blocks.remove(evicted);
            }
        }
        if (evicted != null) {
            log.dropped(held - usage.held(), evicted, usage);
        }
    }
}
