package io.queen.broker.engine;

import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;
import io.queen.broker.store.SqlStates;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Provisions the partitions a push names that the catalog does not hold, coalescing concurrent
 * requests per queue into one statement ({@code log_provision_partitions_v1}).
 *
 * <p>Why: creating a partition bumps its queue's counter row for the current minute (the trigger
 * trg_partitions_created_counter), and that row stays locked until the creator commits. With a call
 * per partition, first pushes to many new partitions of one queue queued up on that row, and every
 * commit woke every waiter: the upstream JS client's bootstrap suite (5,000 new partitions, 50
 * pushes at a time) measured 20 ms per creation in PostgreSQL, 10.6 s for its pushes. Here a
 * request queues what it needs on its queue's stripe; whichever request finds the stripe idle
 * creates everything queued so far, one statement per queue, and the others wait in the broker,
 * where waking them costs nothing (the same emergent batching as {@link PushFusion}). A stale
 * queue entry (its options are re-read every few seconds) comes through here as well and costs
 * one statement per queue however many requests noticed it.
 */
final class PartitionProvisioner {
    private static final int STRIPES = 64;
    /** Names per statement, so one call never grows without limit. */
    static final int MAX_NAMES_PER_CALL = 1_000;
    private static final long SAFETY_WAIT_MS = 1_000;

    private record QueueKey(UUID tenant, String queue) {
    }

    private record Want(QueueKey queue, String partition, CompletableFuture<LogStore.Provisioned> done) {
    }

    private static final class Stripe {
        final CoalescingLane<Want> wants = new CoalescingLane<>(w -> 1, MAX_NAMES_PER_CALL);
    }

    private final Database database;
    private final QueueCatalog catalog;
    private final Stripe[] stripes = new Stripe[STRIPES];
    private final AtomicLong statements = new AtomicLong();

    PartitionProvisioner(Database database, QueueCatalog catalog) {
        this.database = database;
        this.catalog = catalog;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    /** Sets {@code provisioned} of every group, creating queues and partitions where missing. */
    void provision(UUID tenant, List<PushPlan.Group> groups) throws SQLException {
        List<Want> mine = new ArrayList<>(groups.size());
        LinkedHashSet<Stripe> touched = new LinkedHashSet<>();
        for (PushPlan.Group g : groups) {
            QueueKey key = new QueueKey(tenant, g.queue);
            Want w = new Want(key, g.partition, new CompletableFuture<>());
            Stripe s = stripeOf(key);
            s.wants.add(w);
            mine.add(w);
            touched.add(s);
        }
        touched.forEach(this::drain);
        for (int i = 0; i < groups.size(); i++) {
            groups.get(i).provisioned = await(mine.get(i));
        }
    }

    /** Statements run so far (for tests: concurrent requests share them). */
    long statements() {
        return statements.get();
    }

    /** Wants queued on a queue's stripe and not yet taken by a creator (for tests). */
    int queued(UUID tenant, String queue) {
        return stripeOf(new QueueKey(tenant, queue)).wants.queued();
    }

    /** The lock a queue's creations run under (for tests that make requests pile up behind it). */
    ReentrantLock lockOf(UUID tenant, String queue) {
        return stripeOf(new QueueKey(tenant, queue)).wants.workerLock();
    }

    private Stripe stripeOf(QueueKey key) {
        return stripes[Math.floorMod(key.hashCode(), STRIPES)];
    }

    private void drain(Stripe s) {
        s.wants.drain(this::createQueued);
    }

    /** One round of a stripe's lane: every queue's names in one statement, queues by name ascending. */
    private void createQueued(List<Want> batch) {
        Map<QueueKey, List<Want>> byQueue = new LinkedHashMap<>();
        for (Want w : batch) {
            byQueue.computeIfAbsent(w.queue(), k -> new ArrayList<>()).add(w);
        }
        List<QueueKey> order = new ArrayList<>(byQueue.keySet());
        order.sort(Comparator.comparing(QueueKey::queue).thenComparing(QueueKey::tenant)); // names ascending (broker/DESIGN.md, Lock order)
        Throwable failure = null;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            for (QueueKey q : order) {
                create(c, q, byQueue.get(q));
            }
        } catch (SQLException | RuntimeException e) {
            failure = e; // no connection, or it broke
        } finally {
            // Nothing polled is left without an answer, whatever was thrown.
            Throwable cause = failure != null ? failure
                    : new SQLException("partition provisioning stopped before this queue's turn");
            byQueue.values().forEach(list -> list.forEach(x -> x.done().completeExceptionally(cause)));
        }
    }

    private void create(Connection c, QueueKey q, List<Want> wants) {
        List<String> names = new ArrayList<>(new LinkedHashSet<>(wants.stream().map(Want::partition).toList()));
        try {
            statements.incrementAndGet();
            Map<String, LogStore.Provisioned> made = LogStore.provisionPartitions(c, q.tenant(), q.queue(), names);
            answer(q, wants, made);
        } catch (SQLException e) {
            if (names.size() == 1) {
                wants.forEach(w -> w.done().completeExceptionally(e));
                return;
            }
            // One name PostgreSQL refuses must not fail the requests that merely waited with it.
            for (String name : names) {
                create(c, q, wants.stream().filter(w -> w.partition().equals(name)).toList());
            }
        }
    }

    private void answer(QueueKey q, List<Want> wants, Map<String, LogStore.Provisioned> made) {
        for (Want w : wants) {
            LogStore.Provisioned p = made.get(w.partition());
            if (p == null) {
                w.done().completeExceptionally(new SQLException("partition " + w.partition() + " of queue "
                        + q.queue() + " was not provisioned", SqlStates.NO_DATA_FOUND));
            } else {
                catalog.remember(q.tenant(), q.queue(), w.partition(), p);
                w.done().complete(p);
            }
        }
    }

    private LogStore.Provisioned await(Want w) throws SQLException {
        try {
            while (true) {
                try {
                    return w.done().get(SAFETY_WAIT_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    drain(stripeOf(w.queue())); // only a safety net: the creator re-checks before it lets go
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while provisioning queue " + w.queue().queue(), SqlStates.QUERY_CANCELED, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SQLException sql) {
                throw sql;
            }
            throw new SQLException("provisioning queue " + w.queue().queue() + " partition " + w.partition()
                    + " failed: " + e.getCause().getMessage(), e.getCause());
        }
    }
}
