package io.queen.broker.engine;

import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Pushes written inside a transaction another engine service owns, through the same
 * {@link PartitionWriter} as {@code /push} (broker/DESIGN.md, Push path): provisioned inside the
 * transaction by name, partitions locked ascending by id, one segment per partition, dedup inside
 * each queue's window reported per item rather than failing the transaction. Used by the streams
 * cycle for its sink pushes. Nothing is published and no cache is filled until
 * {@link Written#committed} runs after the caller's commit.
 */
public final class TransactionalPush {
    /**
     * One (queue, partition) of the pushes: how many of its items were written and how many were
     * duplicates, and the written segment's first offset and time (null when none was written).
     */
    public record GroupResult(String queue, String partition, int queued, int duplicates, Long baseOffset,
                              Instant createdAt) {
    }

    private final PartitionWriter writer;
    private final CommitListener listener;

    /** Writes through {@code push}'s partition writer; a commit is told to {@code listener}. */
    public TransactionalPush(PushService push, CommitListener listener) {
        this.writer = push.writer();
        this.listener = listener;
    }

    /** What a write did, to answer and, once the caller committed, to publish. */
    public final class Written {
        private final UUID tenant;
        private final List<PushPlan.Group> groups;
        private final PartitionWriter.Batch batch;
        /** Per group, the items repeating a transactionId of an earlier item of the request. */
        private final int[] repeats;

        private Written(UUID tenant, List<PushPlan.Group> groups, PartitionWriter.Batch batch, int[] repeats) {
            this.tenant = tenant;
            this.groups = groups;
            this.batch = batch;
            this.repeats = repeats;
        }

        /** Per (queue, partition), in the items' first-seen order. */
        public List<GroupResult> results() {
            List<GroupResult> out = new ArrayList<>(groups.size());
            for (int k = 0; k < groups.size(); k++) {
                PushPlan.Group g = groups.get(k);
                int queued = 0;
                int duplicates = 0;
                for (PushPlan.Slot s : g.slots) {
                    if ("queued".equals(s.status)) {
                        queued++;
                    } else {
                        duplicates++;
                    }
                }
                // Repeats of a transactionId inside the request are not slots: duplicates too.
                duplicates += repeats[k];
                LogStore.PushVerdict v = batch.written.get(g.provisioned.partitionId());
                out.add(new GroupResult(g.queue, g.partition, queued, duplicates,
                        v == null ? null : v.baseOffset(), v == null ? null : v.createdAt()));
            }
            return out;
        }

        /** After the caller's commit: fills the dedup cache and wakes the partitions' parked pops. */
        public void committed() {
            batch.committed();
            for (PushPlan.Group g : groups) {
                if (batch.written.containsKey(g.provisioned.partitionId())) {
                    listener.committed(tenant, g.queue, g.partition);
                }
            }
        }
    }

    /** Provisions and writes {@code items} on {@code c}, inside the caller's transaction. */
    public Written write(Connection c, UUID tenant, List<PushService.Item> items) throws SQLException {
        PushPlan plan = PushPlan.of(items);
        List<PushPlan.Group> groups = plan.groups();
        PartitionWriter.Batch batch = new PartitionWriter.Batch();
        if (!groups.isEmpty()) {
            writer.provision(c, tenant, groups);
            batch.add(groups);
            try {
                writer.writePartitions(c, batch, false);
            } catch (PartitionWriter.DuplicateInTransactionException e) {
                throw new IllegalStateException("a duplicate was reported, not raised, yet it raised", e);
            }
        }
        Map<String, Integer> groupOf = new HashMap<>();
        for (int k = 0; k < groups.size(); k++) {
            groupOf.put(groups.get(k).queue + '\u0000' + groups.get(k).partition, k);
        }
        int[] repeats = new int[groups.size()];
        for (int i = 0; i < items.size(); i++) {
            if (plan.isRepeat(i)) {
                repeats[groupOf.get(items.get(i).queue() + '\u0000' + items.get(i).partition())]++;
            }
        }
        return new Written(tenant, groups, batch, repeats);
    }
}
