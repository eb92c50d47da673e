package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.Database;
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
 * {@code POST /push}: items are grouped by (queue, partition); each group becomes one segment.
 * Queues and partitions are provisioned first (own short transactions, name order), then every
 * group is written in one transaction with the partitions locked in ascending id order. A segment
 * that the dedup probe rejects is reported item by item and the remaining items are re-packed and
 * pushed again, so the per-item outcome is exact.
 */
public final class PushService {
    public static final UUID ZERO_UUID = new UUID(0, 0);

    public record Item(String queue, String partition, byte[] payload, String transactionId, UUID traceId) {
    }

    public record Result(int index, UUID messageId, String transactionId, String queueName, String status) {
    }

    /** A duplicate found inside a transaction: the transaction route rolls back on it. */
    public static final class DuplicateInTransactionException extends Exception {
        public DuplicateInTransactionException(String message) {
            super(message);
        }
    }

    private final Database database;
    private final PayloadCipher cipher;
    private final CommitListener listener;
    private final int zstdLevel;

    public PushService(Database database, PayloadCipher cipher, CommitListener listener, int zstdLevel) {
        this.database = database;
        this.cipher = cipher;
        this.listener = listener;
        this.zstdLevel = zstdLevel;
    }

    /** One (queue, partition) group of a request. */
    static final class Group {
        final String queue;
        final String partition;
        final List<Integer> leaders = new ArrayList<>();
        LogStore.Provisioned provisioned;

        Group(String queue, String partition) {
            this.queue = queue;
            this.partition = partition;
        }
    }

    public List<Result> push(UUID tenant, List<Item> items) throws SQLException {
        Result[] results = new Result[items.size()];
        UUID[] ids = new UUID[items.size()];
        String[] txns = new String[items.size()];
        Map<Integer, Integer> followerOf = new HashMap<>();
        List<Group> groups = group(items, ids, txns, followerOf);
        if (groups.isEmpty()) {
            return List.of();
        }
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            provision(c, tenant, groups);
            c.setAutoCommit(false);
            try {
                write(c, groups, items, ids, txns, results, false);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } catch (DuplicateInTransactionException e) {
                throw new IllegalStateException("unreachable: duplicates are reported on the push route", e);
            } finally {
                c.setAutoCommit(true);
            }
        }
        for (Group g : groups) {
            listener.committed(tenant, g.queue, g.partition);
        }
        followerOf.forEach((follower, leader) -> {
            Result lead = results[leader];
            String status = "queued".equals(lead.status()) ? "duplicate" : lead.status();
            results[follower] = new Result(follower, lead.messageId(), txns[follower], items.get(follower).queue(), status);
        });
        return List.of(results);
    }

    /**
     * Writes the groups inside the caller's transaction (the transaction route reuses this). With
     * {@code failOnDuplicate} a stored duplicate aborts instead of being reported.
     */
    void write(Connection c, List<Group> groups, List<Item> items, UUID[] ids, String[] txns, Result[] results,
               boolean failOnDuplicate) throws SQLException, DuplicateInTransactionException {
        List<Group> ordered = new ArrayList<>(groups);
        ordered.sort(Comparator.comparing(g -> g.provisioned.partitionId()));
        LogStore.lockPartitions(c, ordered.stream().map(g -> g.provisioned.partitionId()).toList());
        for (Group g : ordered) {
            List<Integer> pending = new ArrayList<>(g.leaders);
            boolean probe = g.provisioned.dedupWindowSeconds() > 0
                    && pending.stream().anyMatch(i -> items.get(i).transactionId() != null);
            while (!pending.isEmpty()) {
                List<Frame> frames = new ArrayList<>(pending.size());
                List<String> pendingTxns = new ArrayList<>(pending.size());
                for (int i : pending) {
                    frames.add(frame(items.get(i), ids[i], txns[i], g.provisioned.encryptionEnabled()));
                    pendingTxns.add(txns[i]);
                }
                LogStore.PushVerdict v = LogStore.pushOne(c, g.provisioned.partitionId(), frames.size(),
                        SegmentCodec.encode(frames, zstdLevel), TxnHash.concat(pendingTxns),
                        g.provisioned.dedupWindowSeconds(), probe);
                if (v.queued()) {
                    for (int i : pending) {
                        results[i] = new Result(i, ids[i], txns[i], g.queue, "queued");
                    }
                    break;
                }
                if (failOnDuplicate) {
                    int first = pending.get((int) v.duplicates().get(0)[0]);
                    throw new DuplicateInTransactionException("QDUP transactionId " + txns[first]
                            + " already pushed to " + g.queue + "/" + g.partition + " inside the dedup window");
                }
                List<Integer> rest = new ArrayList<>(pending);
                for (long[] dup : v.duplicates()) {
                    int i = pending.get((int) dup[0]);
                    results[i] = new Result(i, originalId(c, g.provisioned.partitionId(), dup[1]), txns[i], g.queue,
                            "duplicate");
                    rest.remove(Integer.valueOf(i));
                }
                pending = rest;
            }
        }
    }

    List<Group> group(List<Item> items, UUID[] ids, String[] txns, Map<Integer, Integer> followerOf) {
        Map<String, Group> groups = new LinkedHashMap<>();
        Map<String, Integer> leaderByKey = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            ids[i] = UuidV7.next();
            txns[i] = item.transactionId() != null ? item.transactionId() : ids[i].toString();
            String groupKey = item.queue() + '\u0000' + item.partition();
            Group g = groups.computeIfAbsent(groupKey, k -> new Group(item.queue(), item.partition()));
            Integer leader = leaderByKey.putIfAbsent(groupKey + '\u0000' + txns[i], i);
            if (leader == null) {
                g.leaders.add(i);
            } else {
                followerOf.put(i, leader);
            }
        }
        return new ArrayList<>(groups.values());
    }

    /** Provisioning inserts take names in ascending order (seed 000). */
    void provision(Connection c, UUID tenant, List<Group> groups) throws SQLException {
        List<Group> byName = new ArrayList<>(groups);
        byName.sort(Comparator.<Group, String>comparing(g -> g.queue).thenComparing(g -> g.partition));
        for (Group g : byName) {
            g.provisioned = LogStore.provision(c, tenant, g.queue, g.partition);
        }
    }

    private Frame frame(Item item, UUID id, String txn, boolean encrypt) {
        byte[] payload = item.payload();
        boolean encrypted = false;
        if (encrypt && cipher.isEnabled()) {
            try {
                payload = cipher.encrypt(payload);
                encrypted = true;
            } catch (RuntimeException e) {
                // The reference stores plaintext rather than fail the push.
                payload = item.payload();
            }
        }
        return new Frame(id, item.traceId(), txn, null, payload, encrypted);
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
