package io.queen.broker.engine;

import io.queen.broker.store.LogStore;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A push request planned for writing: its items grouped by (queue, partition) in first-seen order,
 * each group holding its leading slots (the first item of each transaction id), and the request's
 * repeats (an item whose transaction id an earlier item of the same partition carries), which are
 * answered with their leader's outcome. The plan's shape is fixed when it is made. What a write
 * fills in is each group's provisioned partition and pre-packed segment (the route, before the
 * write) and each slot's outcome (only {@link PartitionWriter} writes outcomes; a failed write
 * clears them with {@link #forgetOutcomes}).
 */
final class PushPlan {
    /** One message to write, and where its outcome lands. */
    static final class Slot {
        final PushService.Item item;
        final UUID id;
        final String txn;
        UUID resultId;
        String status;
        /**
         * Null: the queue's option decides whether the payload is encrypted on the way in. Set: the payload
         * is final as it is (a fired timer was sealed at schedule time) and this is its frame flag.
         */
        Boolean sealedEncrypted;

        Slot(PushService.Item item, UUID id, String txn) {
            this.item = item;
            this.id = id;
            this.txn = txn;
        }
    }

    /** One (queue, partition) group of a request: its leading slots (first of each transaction id). */
    static final class Group {
        final String queue;
        final String partition;
        final List<Slot> slots = new ArrayList<>();
        LogStore.Provisioned provisioned;
        /** The slots packed by the request thread, before the flush: used when the flush writes exactly these. */
        PartitionWriter.Encoded encoded;

        Group(String queue, String partition) {
            this.queue = queue;
            this.partition = partition;
        }
    }

    private final List<Group> groups;
    private final Slot[] slotOfIndex;
    private final Map<Integer, Slot> followers;

    private PushPlan(List<Group> groups, Slot[] slotOfIndex, Map<Integer, Slot> followers) {
        this.groups = groups;
        this.slotOfIndex = slotOfIndex;
        this.followers = followers;
    }

    /** Defaults transaction ids, groups by (queue, partition) and finds in-request repeats. */
    static PushPlan of(List<PushService.Item> items) {
        Map<String, Group> groups = new LinkedHashMap<>();
        Map<String, Slot> leaderByKey = new HashMap<>();
        Slot[] slotOfIndex = new Slot[items.size()];
        Map<Integer, Slot> followers = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            PushService.Item item = items.get(i);
            UUID id = item.messageId();
            String txn = item.effectiveTransactionId();
            String groupKey = item.queue() + '\u0000' + item.partition();
            Group g = groups.computeIfAbsent(groupKey, k -> new Group(item.queue(), item.partition()));
            Slot slot = new Slot(item, id, txn);
            slotOfIndex[i] = slot;
            Slot leader = leaderByKey.putIfAbsent(groupKey + '\u0000' + txn, slot);
            if (leader == null) {
                g.slots.add(slot);
            } else {
                followers.put(i, leader);
            }
        }
        return new PushPlan(List.copyOf(groups.values()), slotOfIndex, followers);
    }

    List<Group> groups() {
        return groups;
    }

    /** The slot whose outcome answers item {@code index}: its own, or its leader's when it repeats one. */
    Slot answering(int index) {
        Slot leader = followers.get(index);
        return leader == null ? slotOfIndex[index] : leader;
    }

    /** Item {@code index} repeats an earlier item's transaction id in the same partition. */
    boolean isRepeat(int index) {
        return followers.containsKey(index);
    }

    /** Clears every slot's outcome, before a write is tried again. */
    void forgetOutcomes() {
        groups.forEach(g -> g.slots.forEach(s -> s.status = null));
    }

    /** The per-item answers once written: a repeat of a queued item is a duplicate of it. */
    List<PushService.Result> results(List<PushService.Item> items) {
        PushService.Result[] results = new PushService.Result[items.size()];
        for (int i = 0; i < items.size(); i++) {
            Slot s = answering(i);
            String status = isRepeat(i) && "queued".equals(s.status) ? "duplicate" : s.status;
            results[i] = new PushService.Result(i, s.resultId, s.txn, items.get(i).queue(), status);
        }
        return List.of(results);
    }
}
