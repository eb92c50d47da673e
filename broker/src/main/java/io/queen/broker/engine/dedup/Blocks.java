package io.queen.broker.engine.dedup;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/** The partitions' blocks, least recently used first: a lookup or a write moves one to the end. */
final class Blocks {
    private final LinkedHashMap<UUID, Block> byPartition = new LinkedHashMap<>(16, 0.75f, true);

    /** The partition's block (counted as a use), or null. */
    Block get(UUID partitionId) {
        return byPartition.get(partitionId);
    }

    /** A new, empty block for a partition that has none, most recently used. */
    Block start(UUID partitionId, Usage usage) {
        Block b = new Block(usage);
        byPartition.put(partitionId, b);
        return b;
    }

    /** Forgets the partition's block and what it held. */
    void remove(UUID partitionId) {
        Block b = byPartition.remove(partitionId);
        if (b != null) {
            b.release();
        }
    }

    /** Forgets every block (what they held is reset by the caller). */
    void clear() {
        byPartition.clear();
    }

    boolean isEmpty() {
        return byPartition.isEmpty();
    }

    int size() {
        return byPartition.size();
    }

    /** The least recently used partition and its block (not counted as a use). */
    Map.Entry<UUID, Block> eldest() {
        return byPartition.firstEntry();
    }

    /** The blocks, least recently used first (not counted as uses). */
    Iterable<Block> leastRecentlyUsedFirst() {
        return byPartition.values();
    }
}
