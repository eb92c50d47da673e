package io.queen.broker.engine.wake;

import io.queen.broker.lifecycle.Ticker;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a queue-level pop looks first (broker/DESIGN.md, Pop path): per (tenant, queue, consumer
 * group), the partitions this broker believes hold claimable messages, oldest mark first. Commits
 * (local, or a peer's NOTIFY hint) mark every group of their queue: pushes, and acks that release a
 * lease while messages wait behind the cursor (pushed while the partition was leased).
 *
 * <p>A ring is a hint, never the truth: an entry may turn out empty or leased (the claim then finds
 * nothing and drops it), and a pending partition may be missing (a lease expired, a peer's hints
 * overflowed, the broker just started). Pops therefore still scan the database: whenever a ring is
 * {@link Ring#needsScan() dirty} or its last scan was cut at the limit, and otherwise at most about
 * once a second per ring while nothing else turns up (see PopService).
 */
public final class HotList {
    /** Entries per ring; a ring that would grow past it is marked dirty instead (a scan finds the rest). */
    static final int MAX_ENTRIES = 4096;

    private record QueueKey(UUID tenant, String queue) {
    }

    /** A ring no pop has asked for in this long is dropped (its next pop starts a new, dirty one). */
    static final long IDLE_RING_NANOS = 120_000_000_000L;

    private final ConcurrentHashMap<QueueKey, ConcurrentHashMap<String, Ring>> rings = new ConcurrentHashMap<>();
    private final Ticker ticker;

    public HotList() {
        this(Ticker.SYSTEM);
    }

    /** {@code ticker} measures how long a ring was idle and how old its last scan is. */
    public HotList(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /** The ring of a (queue, group), created empty and dirty (so its first pop scans). Pops call this on every attempt. */
    public Ring ring(UUID tenant, String queue, String group) {
        Objects.requireNonNull(group, "group");
        Map<String, Ring> known = rings.get(key(tenant, queue));
        Ring existing = known == null ? null : known.get(group);
        if (existing != null) {
            // The common case, without locking the map's bin. Should mark() drop this ring at the same
            // instant, this attempt merely misses marks; the next one gets a new, dirty ring.
            existing.lastAskedNanos = ticker.nanoTime();
            return existing;
        }
        Ring[] out = new Ring[1];
        // compute, not computeIfAbsent: atomic with the removal of an emptied queue map in mark().
        rings.compute(key(tenant, queue), (k, groups) -> {
            ConcurrentHashMap<String, Ring> g = groups != null ? groups : new ConcurrentHashMap<>();
            out[0] = g.computeIfAbsent(group, x -> new Ring(ticker));
            return g;
        });
        out[0].lastAskedNanos = ticker.nanoTime();
        return out[0];
    }

    /**
     * Messages became visible in a partition (null: somewhere in the queue) for every group. Rings
     * of groups that stopped popping here are dropped on the way, so a queue that saw many
     * short-lived groups does not pay a mark per group forever.
     */
    void mark(UUID tenant, String queue, String partition) {
        QueueKey key = key(tenant, queue);
        Map<String, Ring> groups = rings.get(key);
        if (groups == null) {
            return; // Nobody popped this queue here yet; its first pop scans anyway.
        }
        long now = ticker.nanoTime();
        boolean dropped = false;
        for (Map.Entry<String, Ring> e : groups.entrySet()) {
            Ring ring = e.getValue();
            if (now - ring.lastAskedNanos > IDLE_RING_NANOS) {
                dropped |= groups.remove(e.getKey(), ring);
            } else if (partition == null) {
                ring.markDirty();
            } else {
                ring.add(partition);
            }
        }
        if (dropped) {
            rings.computeIfPresent(key, (k, g) -> g.isEmpty() ? null : g);
        }
    }

    /** Rings alive, for tests. */
    int ringCount() {
        return rings.values().stream().mapToInt(Map::size).sum();
    }

    /** Signals may have been missed (the peer listener reconnected): every ring scans again. */
    void markAllDirty() {
        rings.values().forEach(groups -> groups.values().forEach(Ring::markDirty));
    }

    private static QueueKey key(UUID tenant, String queue) {
        return new QueueKey(Objects.requireNonNull(tenant, "tenant"), Objects.requireNonNull(queue, "queue"));
    }

    /** One (queue, group): partition names in mark order, and the state of its database scans. */
    public static final class Ring {
        private final LinkedHashSet<String> partitions = new LinkedHashSet<>();
        private final Ticker ticker;
        private volatile long lastAskedNanos;
        private boolean dirty = true;
        private long dirtyEpoch;
        private boolean scanning;
        private boolean lastScanFull;
        private long lastScanNanos;

        private Ring(Ticker ticker) {
            this.ticker = ticker;
            this.lastAskedNanos = ticker.nanoTime();
            this.lastScanNanos = lastAskedNanos - 3_600_000_000_000L; // Never scanned: as if an hour ago.
        }

        /** Adds a partition at the back unless present (its place then stays). */
        public synchronized void add(String partition) {
            if (partitions.size() >= MAX_ENTRIES && !partitions.contains(partition)) {
                markDirtyLocked();
                return;
            }
            partitions.add(partition);
        }

        /** Takes up to {@code k} partitions from the front. */
        public synchronized List<String> take(int k) {
            List<String> out = new ArrayList<>(Math.min(k, partitions.size()));
            Iterator<String> it = partitions.iterator();
            while (out.size() < k && it.hasNext()) {
                out.add(it.next());
                it.remove();
            }
            return out;
        }

        public synchronized int size() {
            return partitions.size();
        }

        /** True when a scan must run before an empty answer can be trusted: dirty, or the last scan hit its limit. */
        public synchronized boolean needsScan() {
            return dirty || lastScanFull;
        }

        /** Nanoseconds since the last scan of this ring completed. */
        public synchronized long sinceLastScanNanos() {
            return ticker.nanoTime() - lastScanNanos;
        }

        /** Claims the right to scan; false when another pop is scanning this ring right now. */
        public synchronized boolean beginScan() {
            if (scanning) {
                return false;
            }
            scanning = true;
            return true;
        }

        /** The dirtiness epoch: read when a scan starts, handed back to {@link #endScan}. */
        public synchronized long scanEpoch() {
            return dirtyEpoch;
        }

        /**
         * A scan started at {@code epoch} found these pending partitions it did not claim itself;
         * {@code full}: it was cut at its limit, so more may exist. Clears dirtiness unless the ring
         * was marked dirty again while the scan ran.
         */
        public synchronized void endScan(long epoch, List<String> unclaimed, boolean full, boolean ownsScan) {
            if (ownsScan) {
                scanning = false;
            }
            for (String p : unclaimed) {
                add(p);
            }
            if (dirtyEpoch == epoch) {
                dirty = false;
            }
            lastScanFull = full;
            lastScanNanos = ticker.nanoTime();
        }

        /** A scan failed (database error): let the next pop try. */
        public synchronized void abortScan(boolean ownsScan) {
            if (ownsScan) {
                scanning = false;
            }
        }

        public synchronized void markDirty() {
            markDirtyLocked();
        }

        private void markDirtyLocked() {
            dirty = true;
            dirtyEpoch++;
        }
    }
}
