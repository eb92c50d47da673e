package io.queen.broker.engine;

import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.Database;
import io.queen.broker.store.SqlStates;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /push}, the use case: the request is planned ({@link PushPlan}), its partitions
 * provisioned (from the catalog, else by {@link PartitionProvisioner}, one statement per queue for
 * concurrent requests) and packed here, then handed to {@link PushFusion}, which merges concurrent
 * requests to one partition into one segment and one commit and writes them through the
 * {@link PartitionWriter}.
 */
public final class PushService {
    /**
     * One item to push. Its message id is fixed when the item is made, before the first attempt: the
     * id (and the transactionId defaulted from it) is what a spooled replay pushes again, so an item
     * that committed before its connection broke is deduplicated on replay instead of stored twice.
     * {@code producerSub} is the pushing caller's verified token subject (broker/DESIGN.md,
     * Authentication), null without one; it travels with the item into the frame and the spool.
     */
    public record Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId,
                       UUID messageId, String producerSub) {
        /** A new item with a freshly minted message id and no producer subject. */
        public Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId) {
            this(queue, partition, payload, transactionId, traceId, UuidV7.next(), null);
        }

        /** A new item with a freshly minted message id, pushed by {@code producerSub} (null for none). */
        public Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId,
                    String producerSub) {
            this(queue, partition, payload, transactionId, traceId, UuidV7.next(), producerSub);
        }

        /** The transactionId stored with the item: the client's, else the message id. */
        public String effectiveTransactionId() {
            return transactionId != null ? transactionId : messageId.toString();
        }
    }

    public record Result(int index, UUID messageId, String transactionId, String queueName, String status) {
    }

    private final QueueCatalog catalog;
    private final CommitListener listener;
    private final PartitionWriter writer;
    private final PushFusion fusion;
    private final PartitionProvisioner provisioner;

    /** {@code dedupCacheEntries}: the dedup cache's budget in messages, 0 for none (every probe in SQL). */
    public PushService(Database database, QueueCatalog catalog, PayloadCipher cipher, CommitListener listener,
                       int zstdLevel, long dedupCacheEntries) {
        this(database, catalog, new PartitionWriter(cipher, zstdLevel, dedupCacheEntries), listener);
    }

    PushService(Database database, QueueCatalog catalog, PartitionWriter writer, CommitListener listener) {
        this.catalog = catalog;
        this.listener = listener;
        this.writer = writer;
        this.fusion = new PushFusion(database, writer);
        this.provisioner = new PartitionProvisioner(database, catalog);
    }

    /** The writer this route writes through, for the routes that write partitions in their own transaction. */
    PartitionWriter writer() {
        return writer;
    }

    /** The partitions of a deleted queue: what this broker cached of them for dedup is dropped. */
    public void forgetPartitions(List<UUID> partitionIds) {
        writer.forgetPartitions(partitionIds);
    }

    public List<Result> push(UUID tenant, List<Item> items) throws SQLException {
        PushPlan plan = PushPlan.of(items);
        if (plan.groups().isEmpty()) {
            return List.of();
        }
        for (int attempt = 1; ; attempt++) {
            provisionCached(tenant, plan.groups());
            // Compression is most of a flush's CPU: done here, it overlaps other requests' database
            // round trips instead of lengthening the flush every request of the shard waits for.
            for (PushPlan.Group g : plan.groups()) {
                g.encoded = writer.encode(g.slots, g.provisioned.encryptionEnabled());
            }
            try {
                fusion.write(plan.groups());
                break;
            } catch (SQLException e) {
                if (attempt == 1 && SqlStates.NO_DATA_FOUND.equals(e.getSQLState())) {
                    // A cached partition was cleaned up meanwhile: forget it and provision again.
                    plan.groups().forEach(g -> catalog.evict(tenant, g.queue));
                    plan.forgetOutcomes();
                    continue;
                }
                throw e;
            }
        }
        for (PushPlan.Group g : plan.groups()) {
            listener.committed(tenant, g.queue, g.partition);
        }
        return plan.results(items);
    }

    private void provisionCached(UUID tenant, List<PushPlan.Group> groups) throws SQLException {
        List<PushPlan.Group> missing = new ArrayList<>();
        for (PushPlan.Group g : groups) {
            g.provisioned = catalog.cached(tenant, g.queue, g.partition);
            if (g.provisioned == null) {
                missing.add(g);
            }
        }
        if (!missing.isEmpty()) {
            provisioner.provision(tenant, missing);
        }
    }
}
