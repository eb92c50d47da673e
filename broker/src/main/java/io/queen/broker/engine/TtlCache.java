package io.queen.broker.engine;

import io.queen.broker.lifecycle.Ticker;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Values read from the database, each fresh for the catalog's TTL ({@link QueueCatalog#TTL_NANOS})
 * after it was read, so a change made on another broker is seen within seconds. Memory is bounded
 * with unbounded queue and group counts: at the bound the map is cleared whole, entries being
 * cheap to read again. Age is measured on the {@link Ticker} the owner hands in, so a test moves
 * past the TTL by advancing a clock instead of waiting five seconds.
 */
final class TtlCache<K, V> {
    static final int MAX_ENTRIES = 100_000;

    private record Entry<V>(V value, long readAtNanos) {
    }

    private final Map<K, Entry<V>> entries = new ConcurrentHashMap<>();
    private final Ticker ticker;

    TtlCache(Ticker ticker) {
        this.ticker = ticker;
    }

    /** The value read less than the TTL ago, else null. */
    V fresh(K key) {
        Entry<V> e = entries.get(key);
        return e != null && ticker.nanoTime() - e.readAtNanos() < QueueCatalog.TTL_NANOS ? e.value() : null;
    }

    /** The value last read, however long ago, else null. */
    V lastRead(K key) {
        Entry<V> e = entries.get(key);
        return e == null ? null : e.value();
    }

    /** Records a value just read. */
    void put(K key, V value) {
        if (entries.size() >= MAX_ENTRIES) {
            entries.clear();
        }
        entries.put(key, new Entry<>(value, ticker.nanoTime()));
    }

    void remove(K key) {
        entries.remove(key);
    }
}
