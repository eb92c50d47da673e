package io.queen.broker.engine.wake;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where long-poll pops park until a push commits to their queue. A pop reads {@link #version} before
 * its claim, and if the claim found nothing, parks with {@link #awaitChange}: a push committed in
 * between moved the version, so the pop returns at once instead of sleeping through it.
 *
 * <p>Gates exist only while someone waits on them, so signalling a queue nobody waits on costs one
 * map lookup plus one atomic increment. Versions live in a fixed array of stripes rather than in
 * the gates (a gate may not exist yet when the version is read); two queues sharing a stripe can
 * only make a pop re-claim once more than needed, never miss a push. A parked pop is woken only
 * by its own gate.
 */
public final class WakeHub {
    /** The receiver keeps this many partition names per queue; older hints are dropped. */
    public static final int MAX_HINTS = 64;

    private static final int QUEUE_STRIPES = 8192;
    // Hints left by gates whose last waiter has gone, until drained; a crude bound, hints are best effort.
    private static final int MAX_LEFTOVER_KEYS = 4096;
    private static final int TENANT_STRIPES = 1024;

    private record QueueKey(UUID tenant, String queue) {
    }

    private final AtomicInteger waiting = new AtomicInteger();
    private final Gates<QueueKey> queueGates = new Gates<>(QUEUE_STRIPES, waiting);
    private final Gates<UUID> tenantGates = new Gates<>(TENANT_STRIPES, waiting);

    /** Read before a claim attempt, then passed to {@link #awaitChange}. */
    public long version(UUID tenant, String queue) {
        return queueGates.version(queueKey(tenant, queue));
    }

    /**
     * True at once if a signal came since {@code seenVersion} was read; else parks up to
     * {@code maxWaitMillis} and returns true when woken by a signal, false on timeout or interrupt
     * (the interrupt flag is kept).
     */
    public boolean awaitChange(UUID tenant, String queue, long seenVersion, long maxWaitMillis) {
        return queueGates.await(queueKey(tenant, queue), seenVersion, maxWaitMillis);
    }

    /** A push committed to this queue: wake its waiters and the tenant's discovery waiters. */
    public void signal(UUID tenant, String queue, String partition) {
        queueGates.signal(queueKey(tenant, queue), partition);
        tenantGates.signal(Objects.requireNonNull(tenant, "tenant"), null);
    }

    /** The partitions signalled (newest last, at most {@link #MAX_HINTS}) since the last drain, while someone waited. */
    public List<String> drainHints(UUID tenant, String queue) {
        return queueGates.drainHints(queueKey(tenant, queue));
    }

    /** Version of the tenant's "any queue" gate, for discovery pops. */
    public long tenantVersion(UUID tenant) {
        return tenantGates.version(Objects.requireNonNull(tenant, "tenant"));
    }

    /** Like {@link #awaitChange}, woken by a signal of any queue of the tenant. */
    public boolean awaitTenantChange(UUID tenant, long seenVersion, long maxWaitMillis) {
        return tenantGates.await(Objects.requireNonNull(tenant, "tenant"), seenVersion, maxWaitMillis);
    }

    /**
     * Wakes every pop currently parked, on queue and tenant gates alike: used when signals may have
     * been missed (the cross-broker listener was disconnected), so each pop re-claims once.
     */
    public void signalAllWaiting() {
        queueGates.signalAll();
        tenantGates.signalAll();
    }

    /** Pops parked right now, for metrics. */
    public int waiting() {
        return waiting.get();
    }

    /** Live gates (queue plus tenant), for metrics and tests: zero when nobody waits. */
    public int gates() {
        return queueGates.size() + tenantGates.size();
    }

    /** Keys holding undrained hints of gates nobody waits on any more; bounded. */
    int leftoverHintKeys() {
        return queueGates.leftoverHints.size();
    }

    private static QueueKey queueKey(UUID tenant, String queue) {
        return new QueueKey(Objects.requireNonNull(tenant, "tenant"), Objects.requireNonNull(queue, "queue"));
    }

    /** One family of gates (per queue or per tenant) with its version stripes. */
    private static final class Gates<K> {
        private final ConcurrentHashMap<K, Gate> live = new ConcurrentHashMap<>();
        // The woken pop is usually the gate's last waiter, so the gate is gone by the time it asks
        // for hints: they are kept here until that drain.
        private final ConcurrentHashMap<K, List<String>> leftoverHints = new ConcurrentHashMap<>();
        private final AtomicLongArray stripes;
        private final AtomicInteger waiting;

        Gates(int stripeCount, AtomicInteger waiting) {
            this.stripes = new AtomicLongArray(stripeCount);
            this.waiting = waiting;
        }

        long version(K key) {
            return stripes.get(stripe(key));
        }

        void signal(K key, String hint) {
            // Order matters: bump first, then look for a gate. A waiter registers its gate first,
            // then re-reads the version, so one of the two always sees the other.
            stripes.incrementAndGet(stripe(key));
            Gate gate = live.get(key);
            if (gate != null) {
                gate.wake(hint);
            }
        }

        void signalAll() {
            for (Gate gate : live.values()) {
                gate.wake(null);
            }
        }

        boolean await(K key, long seenVersion, long maxWaitMillis) {
            int stripe = stripe(key);
            if (stripes.get(stripe) != seenVersion) {
                return true;
            }
            if (maxWaitMillis <= 0) {
                return false;
            }
            while (true) {
                Gate gate = live.computeIfAbsent(key, k -> new Gate());
                gate.lock.lock();
                try {
                    if (gate.retired) {
                        continue; // Its last waiter just left and removed it: take the new one.
                    }
                    gate.waiters++;
                    waiting.incrementAndGet();
                    try {
                        if (stripes.get(stripe) != seenVersion) {
                            return true;
                        }
                        return gate.park(TimeUnit.MILLISECONDS.toNanos(maxWaitMillis));
                    } finally {
                        waiting.decrementAndGet();
                        if (--gate.waiters == 0) {
                            gate.retired = true;
                            live.remove(key, gate);
                            keepLeftoverHints(key, gate);
                        }
                    }
                } finally {
                    gate.lock.unlock();
                }
            }
        }

        List<String> drainHints(K key) {
            LinkedHashSet<String> out = new LinkedHashSet<>();
            List<String> left = leftoverHints.remove(key);
            if (left != null) {
                out.addAll(left);
            }
            Gate gate = live.get(key);
            if (gate != null) {
                gate.lock.lock();
                try {
                    for (String hint : gate.hints) {
                        out.remove(hint);
                        out.add(hint);
                    }
                    gate.hints.clear();
                } finally {
                    gate.lock.unlock();
                }
            }
            return newest(out);
        }

        /** Called with the gate's lock held. */
        private void keepLeftoverHints(K key, Gate gate) {
            if (gate.hints.isEmpty()) {
                return;
            }
            if (leftoverHints.size() >= MAX_LEFTOVER_KEYS) {
                leftoverHints.clear(); // Callers that never drain must not grow this.
            }
            List<String> fresh = List.copyOf(gate.hints);
            gate.hints.clear();
            leftoverHints.merge(key, fresh, (older, newer) -> {
                LinkedHashSet<String> both = new LinkedHashSet<>(older);
                for (String hint : newer) {
                    both.remove(hint);
                    both.add(hint);
                }
                return newest(both);
            });
        }

        private static List<String> newest(LinkedHashSet<String> hints) {
            List<String> all = new ArrayList<>(hints);
            return all.size() <= MAX_HINTS ? all : List.copyOf(all.subList(all.size() - MAX_HINTS, all.size()));
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

    /** Waiters of one key. All fields are guarded by {@code lock}. */
    private static final class Gate {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        final LinkedHashSet<String> hints = new LinkedHashSet<>();
        int waiters;
        boolean retired;
        // Counts wakes so a parked waiter can tell a real wake from a spurious one.
        long wakes;

        void wake(String hint) {
            lock.lock();
            try {
                wakes++;
                if (hint != null) {
                    hints.remove(hint); // Re-added as the newest.
                    hints.add(hint);
                    if (hints.size() > MAX_HINTS) {
                        Iterator<String> oldest = hints.iterator();
                        oldest.next();
                        oldest.remove();
                    }
                }
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        /** Called with the lock held. */
        boolean park(long nanos) {
            long seenWakes = wakes;
            long left = nanos;
            try {
                while (wakes == seenWakes) {
                    if (left <= 0) {
                        return false;
                    }
                    left = changed.awaitNanos(left);
                }
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
