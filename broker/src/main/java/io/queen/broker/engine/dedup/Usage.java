package io.queen.broker.engine.dedup;

/**
 * What the cache holds over all partitions: exact messages, compacted messages and their chunks'
 * heap. Only {@link Block} changes it, as it changes its content, so the totals always match the
 * blocks.
 */
final class Usage {
    /**
     * Heap per exact message, about: 16 bytes of hash, 16 of message id and the index's three
     * longs a slot at a load mostly between 1/4 and 1/2 (48 to 96 bytes). The budget is counted in
     * these: a budget of n entries holds n exact messages, or about 25 times as many compacted.
     */
    static final long BYTES_PER_ENTRY = 100;

    private long exact;
    private long compacted;
    private long chunkBytes;

    void addExact(long messages) {
        exact += messages;
    }

    void addCompacted(long messages, long bytes) {
        compacted += messages;
        chunkBytes += bytes;
    }

    /** Back to nothing held, after the blocks were all forgotten. */
    void reset() {
        exact = 0;
        compacted = 0;
        chunkBytes = 0;
    }

    long exact() {
        return exact;
    }

    long compacted() {
        return compacted;
    }

    /** Messages held, exact and compacted. */
    long held() {
        return exact + compacted;
    }

    long bytes() {
        return exact * BYTES_PER_ENTRY + chunkBytes;
    }
}
