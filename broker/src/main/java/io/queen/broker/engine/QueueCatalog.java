package io.queen.broker.engine;

import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Queue and partition ids, and the queue options the push path reads before it encodes (encryption,
 * dedup window), cached so a steady stream of pushes and pops does not pay a provisioning round
 * trip per request. Entries expire after {@link #TTL_NANOS} so a queue reconfigured elsewhere is
 * seen within seconds; a partition deleted behind the cache is evicted by the caller when the write
 * path reports it missing.
 */
public final class QueueCatalog {
    static final long TTL_NANOS = 5_000_000_000L;
    private static final int MAX_ENTRIES = 100_000;

    private record Key(UUID tenant, String queue, String partition) {
    }

    private record Entry(LogStore.Provisioned value, long loadedAt) {
    }

    private final Map<Key, Entry> entries = new ConcurrentHashMap<>();

    /** The queue (and partition, when named) ids, created on first use. */
    public LogStore.Provisioned resolve(Connection c, UUID tenant, String queue, String partition) throws SQLException {
        LogStore.Provisioned hit = cached(tenant, queue, partition);
        return hit != null ? hit : load(c, tenant, queue, partition);
    }

    /** A fresh cached entry, or null; lets callers skip taking a connection on a hit. */
    public LogStore.Provisioned cached(UUID tenant, String queue, String partition) {
        Entry e = entries.get(new Key(tenant, queue, partition));
        return e != null && System.nanoTime() - e.loadedAt() < TTL_NANOS ? e.value() : null;
    }

    private LogStore.Provisioned load(Connection c, UUID tenant, String queue, String partition) throws SQLException {
        Key key = new Key(tenant, queue, partition);
        long now = System.nanoTime();
        LogStore.Provisioned p = LogStore.provision(c, tenant, queue, partition);
        if (entries.size() >= MAX_ENTRIES) {
            entries.clear(); // Rare and cheap to refill; keeps memory bounded with unbounded partition counts.
        }
        entries.put(key, new Entry(p, now));
        return p;
    }

    /** Forgets a queue's entries (all partitions), e.g. after the write path found a partition gone. */
    public void evict(UUID tenant, String queue) {
        entries.keySet().removeIf(k -> k.tenant().equals(tenant) && k.queue().equals(queue));
    }
}
