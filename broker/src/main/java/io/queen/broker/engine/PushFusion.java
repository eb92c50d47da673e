package io.queen.broker.engine;

import io.queen.broker.store.Database;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Throughput comes from commits that carry many messages (broker/DESIGN.md, Push path). Concurrent
 * push requests enqueue their groups on a shard's {@link CoalescingLane} (by their first
 * partition); whichever request finds the shard idle becomes its flusher and writes everything
 * queued so far in ONE transaction: all slots of a partition become one segment, all partitions
 * are locked ascending by id. Requests arriving while a flush is in flight ride the next one, so
 * coalescing is emergent, with no linger timer. If a merged flush fails, its jobs are retried one
 * by one so one bad request cannot fail the others.
 */
final class PushFusion {
    /**
     * A request waits for any flush in flight on its shard, also one for another partition, so
     * shards are many: with 8, two of ten busy partitions usually shared one and their requests
     * queued behind each other's write and fsync (P=10 push 46-54k msg/s; with 64, 67-80k on the
     * same machine). Even 64 leave two of ten partitions on one shard in about half the cases
     * (partition ids are random), which is how P=10 runs differed; 1,024 make it rare. A shard
     * holds a pooled connection only while it flushes, so connections stay bounded by the requests
     * in flight (and DB_POOL_SIZE, default 160).
     */
    static final int SHARDS = 1024;
    /** Upper bound of messages per merged flush, so one commit never grows without limit. */
    static final int MAX_SLOTS_PER_FLUSH = 5_000;
    private static final long SAFETY_WAIT_MS = 1_000;

    private static final class Job {
        final List<PushPlan.Group> groups;
        final int slots;
        /** Its flush committed and answered every slot. */
        boolean written;
        boolean done;
        SQLException failure;

        Job(List<PushPlan.Group> groups) {
            this.groups = groups;
            this.slots = groups.stream().mapToInt(g -> g.slots.size()).sum();
        }
    }

    private static final class Shard {
        final CoalescingLane<Job> lane = new CoalescingLane<>(j -> j.slots, MAX_SLOTS_PER_FLUSH);
        final ReentrantLock signal = new ReentrantLock();
        final Condition finished = signal.newCondition();
    }

    private final Database database;
    private final PartitionWriter writer;
    private final Shard[] shards = new Shard[SHARDS];

    PushFusion(Database database, PartitionWriter writer) {
        this.database = database;
        this.writer = writer;
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = new Shard();
        }
    }

    /** Writes the groups (already provisioned), possibly together with other requests' groups. */
    void write(List<PushPlan.Group> groups) throws SQLException {
        Shard shard = shards[Math.floorMod(groups.get(0).provisioned.partitionId().hashCode(), SHARDS)];
        Job job = new Job(groups);
        shard.lane.add(job);
        while (true) {
            shard.lane.drain(batch -> flushQueued(shard, batch));
            shard.signal.lock();
            try {
                if (job.done) {
                    break;
                }
                // Another request is flushing; it takes our job in its next round (drain re-checks the
                // queue after unlocking, so no job is left behind). The timeout is only a safety net:
                // a short timed park per waiting request kept the JDK's delay scheduler thread busy.
                shard.finished.await(SAFETY_WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
                if (job.done) {
                    break;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted while waiting for the push flush", SqlStates.QUERY_CANCELED, e);
            } finally {
                shard.signal.unlock();
            }
        }
        if (job.failure != null) {
            throw job.failure;
        }
    }

    /**
     * One round of the shard's lane: flush it (request by request if the merged flush fails), then
     * wake the waiters. A failed flush may still have committed (the connection broke after the
     * commit, or the driver failed reading the answer of a statement that committed), so the retries
     * probe every transaction id and answer an item found under its own message id as queued.
     */
    private void flushQueued(Shard shard, List<Job> batch) {
        try {
            try {
                flush(batch, false);
                batch.forEach(j -> j.written = true);
            } catch (SQLException e) {
                if (batch.size() == 1) {
                    batch.get(0).failure = e;
                } else {
                    for (Job j : batch) {
                        try {
                            flush(List.of(j), true);
                            j.written = true;
                        } catch (SQLException alone) {
                            j.failure = alone;
                        }
                    }
                }
            }
        } catch (Error e) {
            // Out of memory, say: every job still gets an answer, or its request would wait for ever.
            SQLException failure = new SQLException("push flush failed: " + e, e);
            batch.stream().filter(j -> !j.written && j.failure == null).forEach(j -> j.failure = failure);
            throw e;
        } finally {
            shard.signal.lock();
            try {
                batch.forEach(j -> j.done = true);
                shard.finished.signalAll();
            } finally {
                shard.signal.unlock();
            }
        }
    }

    private void flush(List<Job> jobs, boolean retryingUncertain) throws SQLException {
        PartitionWriter.Batch batch = new PartitionWriter.Batch();
        batch.retryingUncertain = retryingUncertain;
        for (Job j : jobs) {
            batch.add(j.groups);
        }
        // One partition is one statement (a retry after duplicates writes nothing the first time), which
        // commits itself: no round trip for COMMIT, during which the partition's row lock was held with
        // the session idle in transaction (most samples of PostgreSQL's backends in the P=10 push phase).
        boolean onePartition = batch.slots.size() == 1;
        try (Connection c = database.connection()) {
            c.setAutoCommit(onePartition);
            try {
                writer.writePartitions(c, batch, false);
                if (!onePartition) {
                    c.commit();
                }
                batch.committed();
            } catch (SQLException | RuntimeException e) {
                if (!onePartition) {
                    Database.rollbackAfter(c, e);
                }
                jobs.forEach(j -> j.groups.forEach(g -> g.slots.forEach(s -> s.status = null)));
                throw e;
            } catch (PartitionWriter.DuplicateInTransactionException e) {
                throw new IllegalStateException("unreachable: duplicates are reported on the push route", e);
            } finally {
                Database.restoreAutoCommit(c);
            }
        } catch (RuntimeException e) {
            throw new SQLException("push flush failed: " + e.getMessage(), e);
        }
    }
}
