package io.queen.broker.engine.dedup;

import java.time.Instant;
import java.util.Collection;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The push path's dedup cache (the reference's QUEEN_DEDUP_CACHE; broker/DESIGN.md, Push path).
 * Without it every push with client transaction ids probes every sidecar row of the partition
 * inside the dedup window, a cost that grows with the window's content. Per partition it remembers
 * the hashes of the segments THIS broker wrote, as long as they are contiguous in offsets: such a
 * {@link Block} can be vouched for ({@code log_push_one_v1} then probes only the rows outside it,
 * written before the block or by another broker since), and an incoming hash found in it is a
 * duplicate without a database probe. A write that does not follow the block (another broker wrote
 * in between) restarts the block. Entries leave by age (older than the window, with a safety
 * margin) and by a global {@link Budget}. Correctness never depends on it: anything it does not
 * hold is probed in SQL. Records are added only after the write committed.
 *
 * <p>Two tiers. Recent segments are exact ({@link ExactTier}): each hash maps to its offset and
 * message id, so a duplicate is answered from memory. When the budget is reached, older segments
 * are compacted to 32-bit fingerprints ({@link CompactedTier}, at most 4 bytes a message against
 * about 100): the block still vouches for them, a hash that matches none is new without a probe,
 * and one that matches makes that push probe the rows up to the matching chunk in SQL, which finds the
 * original (or finds nothing: a fingerprint can collide). Only when the fingerprints alone outgrow
 * the budget are whole partitions dropped, least recently used first.
 *
 * <p>One lock, this object's, guards everything; no object is kept per message ({@link HashIndex},
 * {@link Segment}).
 */
public final class DedupCache {
    /** What the cache knows of an incoming hash: see {@link Hit} and {@link Maybe}. */
    public sealed interface Found permits Hit, Maybe {
    }

    /** The hash is stored at this offset, as this message. */
    public record Hit(long offset, UUID messageId) implements Found {
    }

    /** The hash's fingerprint is in a compacted run ending at {@code upTo}: probe the rows up to there in SQL. */
    public record Maybe(long upTo) implements Found {
    }

    public record Vouch(long from, long to) {
    }

    /**
     * What a push may skip in SQL: the range its probe need not read (null: none) and, per
     * incoming hash, the stored duplicate when the exact tier holds it (null otherwise).
     */
    public record Check(Vouch vouch, Hit[] hits) {
    }

    private static final Logger LOG = Logger.getLogger(DedupCache.class.getName());

    private final Usage usage = new Usage();
    private final Budget budget;
    private final Blocks blocks = new Blocks();

    /** @param maxEntries the budget, in exact messages of about 100 bytes each ({@link #entriesFor}) */
    public DedupCache(long maxEntries) {
        this.budget = new Budget(maxEntries, usage);
    }

    /** The budget in messages for {@code megabytes} of heap (QUEEN_DEDUP_CACHE_MB); 0 for none. */
    public static long entriesFor(long megabytes) {
        return Budget.entriesFor(megabytes);
    }

    /** The vouched block of a partition after dropping what left the window, or null. */
    public synchronized Vouch vouch(UUID partitionId, int windowSeconds, long nowMs) {
        Block b = blocks.get(partitionId);
        if (b == null) {
            return null;
        }
        b.expire(windowSeconds, nowMs);
        if (b.isEmpty()) {
            blocks.remove(partitionId);
            return null;
        }
        return new Vouch(b.from(), b.end());
    }

    /**
     * The vouched range and the in-memory duplicates of one push, under one lock: a block dropped
     * between a separate vouch and lookup (by another partition's write reaching the budget) would
     * have vouched for hashes the lookup no longer finds. A fingerprint match narrows the range to
     * after the run that matched, so SQL probes that run and everything before it.
     *
     * @param hashes the incoming hashes; null entries (no client transactionId) are not looked up
     */
    public synchronized Check check(UUID partitionId, int windowSeconds, long nowMs, byte[][] hashes) {
        Hit[] hits = new Hit[hashes.length];
        Vouch v = vouch(partitionId, windowSeconds, nowMs);
        if (v == null) {
            return new Check(null, hits);
        }
        Block b = blocks.get(partitionId);
        long maybeUpTo = -1;
        for (int i = 0; i < hashes.length; i++) {
            if (hashes[i] == null) {
                continue;
            }
            Found f = b.find(hashes[i]);
            if (f instanceof Hit hit) {
                hits[i] = hit;
            } else if (f instanceof Maybe maybe) {
                maybeUpTo = Math.max(maybeUpTo, maybe.upTo());
            }
        }
        if (maybeUpTo >= v.from()) {
            v = maybeUpTo < v.to() ? new Vouch(maybeUpTo + 1, v.to()) : null;
        }
        return new Check(v, hits);
    }

    /**
     * What this cache knows of an incoming hash inside the window: where it is stored ({@link Hit}),
     * that a compacted run may hold it ({@link Maybe}, the newest such run), or nothing (null).
     */
    public synchronized Found find(UUID partitionId, byte[] hash) {
        Block b = blocks.get(partitionId);
        return b == null ? null : b.find(hash);
    }

    /**
     * Records a committed segment written by this broker. Never throws: it runs after the commit, where
     * a failure would fail a push that is stored (and its retry would find it). On an unexpected
     * failure the cache forgets everything, since what it holds may no longer match what is stored,
     * and every probe runs in SQL until it fills again.
     */
    public synchronized void record(UUID partitionId, long base, byte[] hashes, UUID[] ids, Instant createdAt) {
        if (!budget.enabled()) {
            return; // no cache: every probe runs in SQL
        }
        try {
            add(partitionId, base, hashes, ids, createdAt);
        } catch (RuntimeException | OutOfMemoryError e) { // clearing also gives the heap back
            blocks.clear();
            usage.reset();
            LOG.log(Level.WARNING, "dedup cache failed to record a segment of partition " + partitionId
                    + " at offset " + base + "; cleared it, every push probes in SQL until it fills again", e);
        }
    }

    private void add(UUID partitionId, long base, byte[] hashes, UUID[] ids, Instant createdAt) {
        Block b = blocks.get(partitionId);
        if (b != null && !b.isEmpty() && b.end() != base - 1) {
            blocks.remove(partitionId); // Not contiguous: another broker wrote in between.
            b = null;
        }
        if (b == null) {
            b = blocks.start(partitionId, usage);
        }
        b.add(Segment.of(base, hashes, ids, createdAt.toEpochMilli()));
        if (budget.exceeded()) {
            budget.relieve(blocks, b);
        }
    }

    /**
     * Drops what the cache holds of these partitions (their queue was deleted): their ids never
     * come back, so the entries would only take budget until they left with the window.
     */
    public synchronized void forget(Collection<UUID> partitionIds) {
        for (UUID id : partitionIds) {
            blocks.remove(id);
        }
    }

    /** Messages held, exact and compacted. */
    synchronized long size() {
        return usage.held();
    }

    /** Messages held as fingerprints. */
    synchronized long compactedSize() {
        return usage.compacted();
    }

    /** The partition's compacted runs. */
    synchronized int chunks(UUID partitionId) {
        Block b = blocks.get(partitionId);
        return b == null ? 0 : b.chunks();
    }
}
