package io.queen.broker.engine.wake;

import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.WakeTarget;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where long-poll pops park until a push commits to their queue. A pop reads {@link #version} before
 * its claim, and if the claim found nothing, parks with {@link #awaitChange}: a push committed in
 * between moved the version, so the pop returns at once instead of sleeping through it.
 *
 * <p>A queue-level pop parks with its consumer group. A commit (a push, or an ack releasing a lease
 * with messages behind it) wakes ONE parked pop per group (all
 * of a group's pops are interchangeable: any of them can claim the new messages) plus every pop
 * parked without a group; waking all of them would send each to the database for the same
 * messages. A woken pop that comes back with messages and sees more marked passes the wake on
 * ({@link #wakeGroup}). Every commit also marks the {@link HotList}, where woken pops look first.
 *
 * <p>Gates exist only while someone waits on them, so signalling a queue nobody waits on costs one
 * map lookup plus one atomic increment. Versions live in a fixed array of stripes rather than in
 * the gates (a gate may not exist yet when the version is read); two queues sharing a stripe can
 * only make a pop re-claim once more than needed, never miss a push. A parked pop is woken only
 * by its own gate.
 */
public final class WakeHub implements WakeTarget {
    private static final int QUEUE_STRIPES = 8192;
    private static final int TENANT_STRIPES = 1024;
    /** The longest wait a deadline can express without overflowing (about 146 years). */
    private static final long MAX_WAIT_NANOS = Long.MAX_VALUE / 2;

    private record QueueKey(UUID tenant, String queue) {
    }

    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Gates<QueueKey> queueGates;
    private final Gates<UUID> tenantGates;
    private final HotList hot;
    private final Ticker ticker;

    public WakeHub() {
        this(Ticker.SYSTEM);
    }

    /** {@code ticker} times the parked waits and is the {@link HotList}'s clock. */
    public WakeHub(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.queueGates = new Gates<>(QUEUE_STRIPES, waiting, closed, ticker);
        this.tenantGates = new Gates<>(TENANT_STRIPES, waiting, closed, ticker);
        this.hot = new HotList(ticker);
    }

    /** The clock of the parked waits: a long-poll's deadline is taken on it, so both agree. */
    public Ticker ticker() {
        return ticker;
    }

    /** The partitions believed pending, fed by the signals that pass through here. */
    public HotList hotList() {
        return hot;
    }

    /** Read before a claim attempt, then passed to {@link #awaitChange}. */
    public long version(UUID tenant, String queue) {
        return queueGates.version(queueKey(tenant, queue));
    }

    /**
     * True at once if a signal came since {@code seenVersion} was read; else parks up to
     * {@code maxWaitMillis} and returns true when woken by a signal, false on timeout or interrupt
     * (the interrupt flag is kept). Woken by every signal of the queue.
     */
    public boolean awaitChange(UUID tenant, String queue, long seenVersion, long maxWaitMillis) {
        return queueGates.await(queueKey(tenant, queue), null, seenVersion, maxWaitMillis);
    }

    /** Like {@link #awaitChange}, for a pop of {@code group}: a signal wakes only one such pop per group. */
    public boolean awaitChange(UUID tenant, String queue, String group, long seenVersion, long maxWaitMillis) {
        return queueGates.await(queueKey(tenant, queue), Objects.requireNonNull(group, "group"), seenVersion,
                maxWaitMillis);
    }

    /** A push committed to this queue (partition null: unknown): mark it, wake its waiters and the tenant's discovery waiters. */
    @Override
    public void signal(UUID tenant, String queue, String partition) {
        hot.mark(tenant, queue, partition);
        queueGates.signal(queueKey(tenant, queue), null);
        tenantGates.signal(Objects.requireNonNull(tenant, "tenant"), null);
    }

    /** Wakes one more parked pop of the group: more marked work is waiting for it. */
    public void wakeGroup(UUID tenant, String queue, String group) {
        queueGates.signal(queueKey(tenant, queue), Objects.requireNonNull(group, "group"));
    }

    /** Version of the tenant's "any queue" gate, for discovery pops. */
    public long tenantVersion(UUID tenant) {
        return tenantGates.version(Objects.requireNonNull(tenant, "tenant"));
    }

    /** Like {@link #awaitChange}, woken by a signal of any queue of the tenant. */
    public boolean awaitTenantChange(UUID tenant, long seenVersion, long maxWaitMillis) {
        return tenantGates.await(Objects.requireNonNull(tenant, "tenant"), null, seenVersion, maxWaitMillis);
    }

    /**
     * Wakes every pop currently parked, on queue and tenant gates alike, and marks every hot-list
     * ring dirty: used when signals may have been missed (the cross-broker listener was
     * disconnected), so each pop re-claims once from a fresh scan.
     */
    @Override
    public void signalAllWaiting() {
        hot.markAllDirty();
        queueGates.signalAll();
        tenantGates.signalAll();
    }

    /**
     * The broker is stopping: every parked long-poll wakes now and none parks again, so each
     * answers what it has (an empty pop its 204) instead of holding the shutdown for the whole
     * grace period and then losing its connection. Returns how many were parked.
     */
    public int close() {
        int parked = waiting.get();
        closed.set(true);
        queueGates.signalAll();
        tenantGates.signalAll();
        return parked;
    }

    /** True once {@link #close} was called: long-polls answer instead of waiting. */
    public boolean closed() {
        return closed.get();
    }

    /** Pops parked right now, for metrics. */
    public int waiting() {
        return waiting.get();
    }

    /** Live gates (queue plus tenant), for metrics and tests: zero when nobody waits. */
    public int gates() {
        return queueGates.size() + tenantGates.size();
    }

    private static QueueKey queueKey(UUID tenant, String queue) {
        return new QueueKey(Objects.requireNonNull(tenant, "tenant"), Objects.requireNonNull(queue, "queue"));
    }

    /** One family of gates (per queue or per tenant) with its version stripes. */
    private static final class Gates<K> {
        private final ConcurrentHashMap<K, Gate> live = new ConcurrentHashMap<>();
        private final AtomicLongArray stripes;
        private final AtomicInteger waiting;
        private final AtomicBoolean closed;
        private final Ticker ticker;

        Gates(int stripeCount, AtomicInteger waiting, AtomicBoolean closed, Ticker ticker) {
            this.stripes = new AtomicLongArray(stripeCount);
            this.waiting = waiting;
            this.closed = closed;
            this.ticker = ticker;
        }

        long version(K key) {
            return stripes.get(stripe(key));
        }

        /** {@code onlyGroup} null: a commit (one waiter per group); else one waiter of that group. */
        void signal(K key, String onlyGroup) {
            // Order matters: bump first, then look for a gate. A waiter registers its gate first,
            // then re-reads the version, so one of the two always sees the other.
            stripes.incrementAndGet(stripe(key));
            Gate gate = live.get(key);
            if (gate != null) {
                gate.wake(onlyGroup);
            }
        }

        void signalAll() {
            for (Gate gate : live.values()) {
                gate.wakeAll();
            }
        }

        boolean await(K key, String group, long seenVersion, long maxWaitMillis) {
            int stripe = stripe(key);
            if (stripes.get(stripe) != seenVersion) {
                return true;
            }
            if (maxWaitMillis <= 0) {
                return false;
            }
            // Fixed before this waiter counts as parked: whoever sees it parked and then moves the
            // ticker past the timeout ends the wait. Capped so the deadline cannot overflow.
            long deadline = ticker.nanoTime() + Math.min(TimeUnit.MILLISECONDS.toNanos(maxWaitMillis), MAX_WAIT_NANOS);
            while (true) {
                Gate gate = live.computeIfAbsent(key, k -> new Gate());
                gate.lock.lock();
                try {
                    if (gate.retired) {
                        continue; // Its last waiter just left and removed it: take the new one.
                    }
                    gate.present++;
                    waiting.incrementAndGet();
                    try {
                        // Checked under the gate's lock once registered: close() either finds this
                        // gate and wakes it after we park, or we see the flag here.
                        if (stripes.get(stripe) != seenVersion || closed.get()) {
                            return true;
                        }
                        return gate.park(group, ticker, deadline);
                    } finally {
                        waiting.decrementAndGet();
                        if (--gate.present == 0) {
                            gate.retired = true;
                            live.remove(key, gate);
                        }
                    }
                } finally {
                    gate.lock.unlock();
                }
            }
        }

        int size() {
            return live.size();
        }

        private int stripe(K key) {
            int h = key.hashCode();
            h ^= h >>> 16;
            return h & (stripes.length() - 1);
        }
    }

    /** One parked pop: its group (null: woken by every signal) and its own condition. */
    private static final class Waiter {
        final String group;
        final Condition condition;
        boolean woken;

        Waiter(String group, Condition condition) {
            this.group = group;
            this.condition = condition;
        }
    }

    /** Waiters of one key, oldest first. All fields are guarded by {@code lock}. */
    private static final class Gate {
        final ReentrantLock lock = new ReentrantLock();
        final List<Waiter> parked = new ArrayList<>();
        int present;
        boolean retired;

        /** {@code onlyGroup} null: every group-less waiter and the oldest of each group; else the oldest of that group. */
        void wake(String onlyGroup) {
            lock.lock();
            try {
                Set<String> served = new HashSet<>();
                Iterator<Waiter> it = parked.iterator();
                while (it.hasNext()) {
                    Waiter w = it.next();
                    boolean pick = w.group == null
                            ? onlyGroup == null
                            : (onlyGroup == null || onlyGroup.equals(w.group)) && served.add(w.group);
                    if (pick) {
                        it.remove();
                        w.woken = true;
                        w.condition.signal();
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        void wakeAll() {
            lock.lock();
            try {
                for (Waiter w : parked) {
                    w.woken = true;
                    w.condition.signal();
                }
                parked.clear();
            } finally {
                lock.unlock();
            }
        }

        /** Called with the lock held; {@code deadline} is a reading of {@code ticker}. */
        boolean park(String group, Ticker ticker, long deadline) {
            Waiter me = new Waiter(group, lock.newCondition());
            parked.add(me);
            try {
                while (!me.woken) {
                    if (ticker.nanoTime() - deadline >= 0) {
                        return false;
                    }
                    ticker.awaitUntil(lock, me.condition, deadline);
                }
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return me.woken;
            } finally {
                if (!me.woken) {
                    parked.remove(me);
                }
            }
        }
    }
}
