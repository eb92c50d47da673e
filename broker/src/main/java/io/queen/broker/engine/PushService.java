package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /push}: items are grouped by (queue, partition) and provisioned (from the catalog, else
 * by {@link PartitionProvisioner}, one statement per queue for concurrent requests), then handed to
 * {@link PushFusion}, which merges concurrent requests to one partition into one segment and
 * bundles partitions into one transaction with the rows locked in ascending id order. The dedup
 * probe rejects a whole segment; the rejected items are reported as duplicates of the originals and
 * the rest are re-packed and pushed again, so each item's outcome is exact.
 */
public final class PushService {
    public static final UUID ZERO_UUID = new UUID(0, 0);

    /**
     * One item to push. Its message id is fixed when the item is made, before the first attempt: the
     * id (and the transactionId defaulted from it) is what a spooled replay pushes again, so an item
     * that committed before its connection broke is deduplicated on replay instead of stored twice.
     */
    public record Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId,
                       UUID messageId) {
        /** A new item with a freshly minted message id. */
        public Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId) {
            this(queue, partition, payload, transactionId, traceId, UuidV7.next());
        }

        /** The transactionId stored with the item: the client's, else the message id. */
        public String effectiveTransactionId() {
            return transactionId != null ? transactionId : messageId.toString();
        }
    }

    public record Result(int index, UUID messageId, String transactionId, String queueName, String status) {
    }

    /** A duplicate found inside a transaction: the transaction route rolls back on it. */
    public static final class DuplicateInTransactionException extends Exception {
        public DuplicateInTransactionException(String message) {
            super(message);
        }
    }

    /** One message to write, and where its outcome lands. */
    static final class Slot {
        final Item item;
        final UUID id;
        final String txn;
        UUID resultId;
        String status;

        Slot(Item item, UUID id, String txn) {
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
        Encoded encoded;

        Group(String queue, String partition) {
            this.queue = queue;
            this.partition = partition;
        }
    }

    /** A segment blob and its hash row for a list of slots, in that order. */
    record Encoded(List<Slot> slots, byte[] blob, byte[] hashes) {
    }

    /** A request split into groups, with its in-request repeats (follower index to leader slot). */
    static final class Plan {
        final List<Group> groups;
        final Slot[] slotOfIndex;
        final Map<Integer, Slot> followers;

        Plan(List<Group> groups, Slot[] slotOfIndex, Map<Integer, Slot> followers) {
            this.groups = groups;
            this.slotOfIndex = slotOfIndex;
            this.followers = followers;
        }
    }

    private final Database database;
    private final QueueCatalog catalog;
    private final PayloadCipher cipher;
    private final CommitListener listener;
    private final int zstdLevel;
    private final PushFusion fusion;
    private final PartitionProvisioner provisioner;
    private final DedupCache dedupCache;

    /** {@code dedupCacheEntries}: the dedup cache's budget in messages, 0 for none (every probe in SQL). */
    public PushService(Database database, QueueCatalog catalog, PayloadCipher cipher, CommitListener listener,
                       int zstdLevel, long dedupCacheEntries) {
        this.database = database;
        this.catalog = catalog;
        this.cipher = cipher;
        this.listener = listener;
        this.zstdLevel = zstdLevel;
        this.fusion = new PushFusion(database, this);
        this.provisioner = new PartitionProvisioner(database, catalog);
        this.dedupCache = new DedupCache(dedupCacheEntries);
    }

    /** The slots to write per partition, with what the write needs to know of each partition. */
    static final class Batch {
        final Map<UUID, List<Slot>> slots = new HashMap<>();
        final Map<UUID, LogStore.Provisioned> partitions = new HashMap<>();
        /** A partition's pre-packed segment, kept only while a single group feeds that partition. */
        final Map<UUID, Encoded> encoded = new HashMap<>();
        /** Cache records of written segments, applied only once the transaction committed. */
        final List<Runnable> afterCommit = new ArrayList<>();

        void add(List<Group> groups) {
            for (Group g : groups) {
                UUID pid = g.provisioned.partitionId();
                List<Slot> list = slots.get(pid);
                if (list == null) {
                    slots.put(pid, new ArrayList<>(g.slots));
                    if (g.encoded != null) {
                        encoded.put(pid, g.encoded);
                    }
                } else {
                    list.addAll(g.slots);
                    encoded.remove(pid); // Merged with another request: one segment is packed in the flush.
                }
                partitions.put(pid, g.provisioned);
            }
        }

        void committed() {
            afterCommit.forEach(Runnable::run);
        }
    }

    public List<Result> push(UUID tenant, List<Item> items) throws SQLException {
        Plan plan = plan(items);
        if (plan.groups.isEmpty()) {
            return List.of();
        }
        for (int attempt = 1; ; attempt++) {
            provisionCached(tenant, plan.groups);
            // Compression is most of a flush's CPU: done here, it overlaps other requests' database
            // round trips instead of lengthening the flush every request of the shard waits for.
            for (Group g : plan.groups) {
                g.encoded = encode(g.slots, g.provisioned.encryptionEnabled());
            }
            try {
                fusion.write(plan.groups);
                break;
            } catch (SQLException e) {
                if (attempt == 1 && SqlStates.NO_DATA_FOUND.equals(e.getSQLState())) {
                    // A cached partition was cleaned up meanwhile: forget it and provision again.
                    plan.groups.forEach(g -> catalog.evict(tenant, g.queue));
                    plan.groups.forEach(g -> g.slots.forEach(s -> s.status = null));
                    continue;
                }
                throw e;
            }
        }
        for (Group g : plan.groups) {
            listener.committed(tenant, g.queue, g.partition);
        }
        Result[] results = new Result[items.size()];
        for (int i = 0; i < items.size(); i++) {
            Slot s = plan.slotOfIndex[i];
            Slot leader = plan.followers.get(i);
            if (leader == null) {
                results[i] = new Result(i, s.resultId, s.txn, s.item.queue(), s.status);
            } else {
                String status = "queued".equals(leader.status) ? "duplicate" : leader.status;
                results[i] = new Result(i, leader.resultId, leader.txn, items.get(i).queue(), status);
            }
        }
        return List.of(results);
    }

    /** Defaults transaction ids, groups by (queue, partition) and finds in-request repeats. */
    Plan plan(List<Item> items) {
        Map<String, Group> groups = new LinkedHashMap<>();
        Map<String, Slot> leaderByKey = new HashMap<>();
        Slot[] slotOfIndex = new Slot[items.size()];
        Map<Integer, Slot> followers = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
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
        return new Plan(new ArrayList<>(groups.values()), slotOfIndex, followers);
    }

    private void provisionCached(UUID tenant, List<Group> groups) throws SQLException {
        List<Group> missing = new ArrayList<>();
        for (Group g : groups) {
            g.provisioned = catalog.cached(tenant, g.queue, g.partition);
            if (g.provisioned == null) {
                missing.add(g);
            }
        }
        if (!missing.isEmpty()) {
            provisioner.provision(tenant, missing);
        }
    }

    /**
     * Provisions inside the caller's transaction, names in ascending order (seed 000). Nothing enters
     * the shared cache here: a row created in a transaction may still roll back.
     */
    void provision(Connection c, UUID tenant, List<Group> groups) throws SQLException {
        List<Group> byName = new ArrayList<>(groups);
        byName.sort(Comparator.<Group, String>comparing(g -> g.queue).thenComparing(g -> g.partition));
        for (Group g : byName) {
            g.provisioned = LogStore.provision(c, tenant, g.queue, g.partition);
        }
    }

    /**
     * Writes partitions inside the caller's transaction: locks them ascending by id (when more than
     * one), then one segment each. Slots repeating a transaction id already in the same partition's
     * list are reported as duplicates of the first. With {@code failOnDuplicate} a stored duplicate
     * aborts instead of being reported (the transaction route). The caller runs
     * {@link Batch#committed()} after its commit.
     */
    void writePartitions(Connection c, Batch batch, boolean failOnDuplicate)
            throws SQLException, DuplicateInTransactionException {
        List<UUID> ids = new ArrayList<>(batch.slots.keySet());
        ids.sort(Comparator.naturalOrder());
        if (ids.size() > 1) {
            // One partition needs no pre-lock: log_push_one_v1 takes its row lock itself.
            LogStore.lockPartitions(c, ids);
        }
        for (UUID pid : ids) {
            writePartition(c, pid, batch.slots.get(pid), batch.partitions.get(pid), batch.encoded.get(pid),
                    failOnDuplicate, batch.afterCommit);
        }
    }

    private void writePartition(Connection c, UUID partitionId, List<Slot> slots, LogStore.Provisioned partition,
                                Encoded preEncoded, boolean failOnDuplicate, List<Runnable> afterCommit)
            throws SQLException, DuplicateInTransactionException {
        Map<String, Slot> firstByTxn = new HashMap<>();
        Map<Slot, Slot> repeats = new LinkedHashMap<>();
        List<Slot> pending = new ArrayList<>(slots.size());
        for (Slot s : slots) {
            Slot first = firstByTxn.putIfAbsent(s.txn, s);
            if (first == null) {
                pending.add(s);
            } else {
                repeats.put(s, first);
            }
        }
        // Broker-minted transaction ids are fresh UUIDv7s and cannot collide: only client ids need the probe.
        boolean probe = pending.stream().anyMatch(s -> s.item.transactionId() != null);
        // The catalog's window may be up to its TTL old; SQL re-reads it under the lock for the probe itself.
        int window = partition.dedupWindowSeconds();
        DedupCache.Vouch vouch = null;
        if (window > 0) {
            byte[][] hashes = new byte[pending.size()][];
            for (int i = 0; probe && i < hashes.length; i++) {
                Slot s = pending.get(i);
                hashes[i] = s.item.transactionId() == null ? null : TxnHash.of(s.txn);
            }
            DedupCache.Check check = dedupCache.check(partitionId, window, System.currentTimeMillis(), hashes);
            vouch = check.vouch();
            List<Slot> rest = null; // only when the cache found a duplicate: usually it finds none
            for (int i = 0; i < hashes.length; i++) {
                Slot s = pending.get(i);
                DedupCache.Hit hit = check.hits()[i];
                if (hit == null) {
                    if (rest != null) {
                        rest.add(s);
                    }
                    continue;
                }
                if (failOnDuplicate) {
                    throw duplicateInTransaction(s);
                }
                s.resultId = hit.messageId();
                s.status = "duplicate";
                if (rest == null) {
                    rest = new ArrayList<>(pending.subList(0, i));
                }
            }
            if (rest != null) {
                pending = rest;
            }
        }
        while (!pending.isEmpty()) {
            Encoded segment = preEncoded != null && preEncoded.slots().equals(pending)
                    ? preEncoded : encode(pending, partition.encryptionEnabled());
            preEncoded = null;
            byte[] hashes = segment.hashes();
            LogStore.PushVerdict v = LogStore.pushOne(c, partitionId, pending.size(), segment.blob(), hashes, null,
                    probe, vouch == null ? null : vouch.from(), vouch == null ? null : vouch.to());
            if (v.queued()) {
                UUID[] written = new UUID[pending.size()];
                for (int i = 0; i < written.length; i++) {
                    Slot s = pending.get(i);
                    s.resultId = s.id;
                    s.status = "queued";
                    written[i] = s.id;
                }
                if (window > 0) {
                    afterCommit.add(() -> dedupCache.record(partitionId, v.baseOffset(), hashes, written, v.createdAt()));
                }
                break;
            }
            if (failOnDuplicate) {
                throw duplicateInTransaction(pending.get((int) v.duplicates().get(0)[0]));
            }
            List<Slot> rest = new ArrayList<>(pending);
            for (long[] dup : v.duplicates()) {
                Slot s = pending.get((int) dup[0]);
                s.resultId = originalId(c, partitionId, dup[1]);
                s.status = "duplicate";
                rest.remove(s);
            }
            pending = rest;
        }
        repeats.forEach((repeat, first) -> {
            repeat.resultId = first.resultId;
            repeat.status = "duplicate";
        });
    }

    private Encoded encode(List<Slot> slots, boolean encrypt) {
        List<Frame> frames = new ArrayList<>(slots.size());
        List<String> txns = new ArrayList<>(slots.size());
        for (Slot s : slots) {
            frames.add(frame(s, encrypt));
            txns.add(s.txn);
        }
        return new Encoded(List.copyOf(slots), SegmentCodec.encode(frames, zstdLevel), TxnHash.concat(txns));
    }

    private static DuplicateInTransactionException duplicateInTransaction(Slot s) {
        return new DuplicateInTransactionException("QDUP transactionId " + s.txn + " already pushed to "
                + s.item.queue() + "/" + s.item.partition() + " inside the dedup window");
    }

    private Frame frame(Slot s, boolean encrypt) {
        byte[] payload = s.item.payload();
        boolean encrypted = false;
        if (encrypt && cipher.isEnabled()) {
            try {
                payload = cipher.encrypt(payload);
                encrypted = true;
            } catch (RuntimeException e) {
                // The reference stores plaintext rather than fail the push.
                payload = s.item.payload();
            }
        }
        return new Frame(s.id, s.item.traceId(), s.txn, null, payload, encrypted);
    }

    /** The message id stored at an offset, or the zero UUID when retention has removed it. */
    static UUID originalId(Connection c, UUID partitionId, long offset) throws SQLException {
        LogStore.Segment s = LogStore.segmentCovering(c, partitionId, offset);
        if (s == null) {
            return ZERO_UUID;
        }
        return SegmentCodec.decode(s.blob(), (int) (offset - s.baseOffset()), 1).get(0).messageId();
    }
}
