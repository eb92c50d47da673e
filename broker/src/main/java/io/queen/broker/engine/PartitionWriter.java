package io.queen.broker.engine;

import io.queen.broker.engine.PushPlan.Group;
import io.queen.broker.engine.PushPlan.Slot;
import io.queen.broker.engine.dedup.DedupCache;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.store.LogStore;

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
 * The one place a planned message becomes an offset: inside the caller's transaction it locks the
 * partitions ascending by id, drops what the dedup cache or the SQL probe knows as a duplicate,
 * packs the rest into one segment per partition (frames, encryption at rest, zstd) and writes it
 * with {@code log_push_one_v1}, the only offset allocator, and records each slot's outcome. Push
 * fusion, the transaction route and the streams cycle all write through it. The dedup probe
 * rejects a whole segment; the rejected items are reported as duplicates of the originals and the
 * rest re-packed and written again, so each item's outcome is exact. The timer fire writes through it
 * too, with payloads sealed at schedule time ({@link PushPlan.Slot#sealedEncrypted}).
 */
final class PartitionWriter {
    /** The message id answered for a duplicate whose original retention has already removed. */
    static final UUID ZERO_UUID = new UUID(0, 0);

    /** A duplicate found inside a transaction: the transaction route rolls back on it. */
    static final class DuplicateInTransactionException extends Exception {
        DuplicateInTransactionException(String message) {
            super(message);
        }
    }

    /** A segment blob and its hash row for a list of slots, in that order. */
    record Encoded(List<Slot> slots, byte[] blob, byte[] hashes) {
    }

    /** The slots to write per partition, with what the write needs to know of each partition. */
    static final class Batch {
        final Map<UUID, List<Slot>> slots = new HashMap<>();
        final Map<UUID, LogStore.Provisioned> partitions = new HashMap<>();
        /** A partition's pre-packed segment, kept only while a single group feeds that partition. */
        final Map<UUID, Encoded> encoded = new HashMap<>();
        /** Cache records of written segments, applied only once the transaction committed. */
        final List<Runnable> afterCommit = new ArrayList<>();
        /** The verdict of each partition's written segment (absent when every slot was a duplicate). */
        final Map<UUID, LogStore.PushVerdict> written = new HashMap<>();
        /**
         * An earlier attempt at these slots failed in a way that may have committed them: their
         * broker-minted transaction ids are probed too, so a committed item is found, not stored twice.
         */
        boolean retryingUncertain;

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

    /**
     * The least window a retry after an uncertain attempt probes, also on a queue whose dedup is
     * off: the attempt it checks for was a moment ago, and its hash rows are stored regardless.
     */
    static final int UNCERTAIN_RETRY_WINDOW_SECONDS = 300;

    private final PayloadCipher cipher;
    private final int zstdLevel;
    private final DedupCache dedupCache;

    /** {@code dedupCacheEntries}: the dedup cache's budget in messages, 0 for none (every probe in SQL). */
    PartitionWriter(PayloadCipher cipher, int zstdLevel, long dedupCacheEntries) {
        this.cipher = cipher;
        this.zstdLevel = zstdLevel;
        this.dedupCache = new DedupCache(dedupCacheEntries);
    }

    /**
     * Provisions inside the caller's transaction, names in ascending order (broker/DESIGN.md, Lock order). Nothing enters
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
                    failOnDuplicate, batch);
        }
    }

    private void writePartition(Connection c, UUID partitionId, List<Slot> slots, LogStore.Provisioned partition,
                                Encoded preEncoded, boolean failOnDuplicate, Batch batch)
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
        // Broker-minted transaction ids are fresh UUIDv7s and cannot collide: only client ids need the
        // probe, unless an earlier attempt at these very slots may have committed.
        boolean probeMinted = batch.retryingUncertain;
        boolean probe = probeMinted || pending.stream().anyMatch(s -> s.item.transactionId() != null);
        // The catalog's window may be up to its TTL old; SQL re-reads it under the lock for the probe itself.
        int window = partition.dedupWindowSeconds();
        DedupCache.Vouch vouch = null;
        if (window > 0) {
            byte[][] hashes = new byte[pending.size()][];
            for (int i = 0; probe && i < hashes.length; i++) {
                Slot s = pending.get(i);
                hashes[i] = s.item.transactionId() == null && !probeMinted ? null : TxnHash.of(s.txn);
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
                answerStored(s, hit.messageId());
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
            Integer probeWindow = probeMinted ? Math.max(window, UNCERTAIN_RETRY_WINDOW_SECONDS) : null;
            LogStore.PushVerdict v = LogStore.pushOne(c, partitionId, pending.size(), segment.blob(), hashes,
                    probeWindow, probe, vouch == null ? null : vouch.from(), vouch == null ? null : vouch.to());
            if (v.queued()) {
                UUID[] written = new UUID[pending.size()];
                for (int i = 0; i < written.length; i++) {
                    Slot s = pending.get(i);
                    s.resultId = s.id;
                    s.status = "queued";
                    written[i] = s.id;
                }
                if (window > 0) {
                    batch.afterCommit.add(() -> dedupCache.record(partitionId, v.baseOffset(), hashes, written,
                            v.createdAt()));
                }
                batch.written.put(partitionId, v);
                break;
            }
            if (failOnDuplicate) {
                throw duplicateInTransaction(pending.get((int) v.duplicates().get(0)[0]));
            }
            List<Slot> rest = new ArrayList<>(pending);
            for (long[] dup : v.duplicates()) {
                Slot s = pending.get((int) dup[0]);
                answerStored(s, originalId(c, partitionId, dup[1]));
                rest.remove(s);
            }
            pending = rest;
        }
        repeats.forEach((repeat, first) -> {
            repeat.resultId = first.resultId;
            repeat.status = "duplicate";
        });
    }

    /**
     * Answers a slot whose transaction id is already stored as {@code storedId}. When that is the
     * slot's own message id (fixed before the first attempt), the row is this very item, written by
     * an attempt whose outcome was lost: the connection broke after the commit, or the driver failed
     * reading the answer of a statement that committed (pgjdbc reports an OutOfMemoryError while it
     * reads a result as SQLState 53200), and the flush was retried. The item is queued, not a
     * duplicate of itself.
     */
    private static void answerStored(Slot s, UUID storedId) {
        s.resultId = storedId;
        s.status = storedId.equals(s.id) ? "queued" : "duplicate";
    }

    /** Drops the dedup cache's entries of deleted partitions. */
    void forgetPartitions(List<UUID> partitionIds) {
        dedupCache.forget(partitionIds);
    }

    Encoded encode(List<Slot> slots, boolean encrypt) {
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
        if (s.sealedEncrypted != null) {
            return new Frame(s.id, s.item.traceId(), s.txn, s.item.producerSub(), s.item.payload(), s.sealedEncrypted);
        }
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
        return new Frame(s.id, s.item.traceId(), s.txn, s.item.producerSub(), payload, encrypted);
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
