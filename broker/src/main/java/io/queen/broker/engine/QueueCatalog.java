package io.queen.broker.engine;

import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Queue and partition ids, and the queue options the push path reads before it encodes (encryption,
 * dedup window), cached so a steady stream of pushes and pops does not pay a provisioning round
 * trip per request.
 *
 * <p>Two levels, because they go stale differently. A queue's entry (id and options) expires after
 * {@link #TTL_NANOS}, so a queue reconfigured elsewhere is seen within seconds even if the other
 * broker's notification (PgWakeChannel's config entries, which evict at once) was lost; one refresh
 * serves every partition of the queue. A partition's id never changes while it exists, so it is kept
 * until the queue's id changes (deleted and re-created) or a caller evicts the queue after the
 * write path reported a partition missing. Without this split, a queue with 10,000 partitions
 * re-provisioned each of them every few seconds.
 */
public final class QueueCatalog {
    static final long TTL_NANOS = 5_000_000_000L;
    private static final int MAX_PARTITIONS = 200_000;

    private record QueueKey(UUID tenant, String queue) {
    }

    private record PartitionKey(UUID tenant, String queue, String partition) {
    }

    private record PartitionEntry(UUID queueId, UUID partitionId) {
    }

    /** The queue-level answers (their {@code partitionId()} is null), fresh for {@link #TTL_NANOS}. */
    private final TtlCache<QueueKey, LogStore.Provisioned> queues;
    private final Map<PartitionKey, PartitionEntry> partitions = new ConcurrentHashMap<>();

    public QueueCatalog() {
        this(Ticker.SYSTEM);
    }

    /** {@code ticker}: what a queue entry's age is measured on. */
    public QueueCatalog(Ticker ticker) {
        this.queues = new TtlCache<>(ticker);
    }

    /**
     * The queue's id and options, the queue created on first use. Partitions are created by pushes
     * only ({@link PartitionProvisioner}), which {@link #remember} them here.
     */
    public LogStore.Provisioned resolveQueue(Connection c, UUID tenant, String queue) throws SQLException {
        LogStore.Provisioned hit = cached(tenant, queue, null);
        if (hit != null) {
            return hit;
        }
        LogStore.Provisioned q = LogStore.provision(c, tenant, queue, null);
        queues.put(new QueueKey(tenant, queue), q);
        return q;
    }

    /** A fresh cached entry, or null; lets callers skip taking a connection on a hit. */
    public LogStore.Provisioned cached(UUID tenant, String queue, String partition) {
        LogStore.Provisioned q = queues.fresh(new QueueKey(tenant, queue));
        if (q == null) {
            return null;
        }
        return partition == null ? q : combine(q, partitions.get(new PartitionKey(tenant, queue, partition)));
    }

    /** Caches a partition provisioned elsewhere (committed), with its queue's options as of now. */
    public void remember(UUID tenant, String queue, String partition, LogStore.Provisioned p) {
        if (partitions.size() >= MAX_PARTITIONS) {
            partitions.clear(); // Rare and cheap to refill; keeps memory bounded with unbounded partition counts.
        }
        partitions.put(new PartitionKey(tenant, queue, partition), new PartitionEntry(p.queueId(), p.partitionId()));
        queues.put(new QueueKey(tenant, queue), new LogStore.Provisioned(p.queueId(), null,
                p.dedupWindowSeconds(), p.encryptionEnabled()));
    }

    /** The partition answer, when the partition's entry belongs to this incarnation of the queue. */
    private static LogStore.Provisioned combine(LogStore.Provisioned queue, PartitionEntry partition) {
        if (partition == null || !partition.queueId().equals(queue.queueId())) {
            return null;
        }
        return new LogStore.Provisioned(queue.queueId(), partition.partitionId(), queue.dedupWindowSeconds(),
                queue.encryptionEnabled());
    }

    /** Forgets a queue's entries (all partitions), e.g. after the write path found a partition gone. */
    public void evict(UUID tenant, String queue) {
        queues.remove(new QueueKey(tenant, queue));
        partitions.keySet().removeIf(k -> k.tenant().equals(tenant) && k.queue().equals(queue));
    }
}
