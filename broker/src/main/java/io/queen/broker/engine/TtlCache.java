package io.queen.broker.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Values read from the database, each fresh for the catalog's TTL ({@link QueueCatalog#TTL_NANOS})
 * after it was read, so a change made on another broker is seen within seconds. Memory is bounded
 * with unbounded queue and group counts: at the bound the map is cleared whole, entries being
 * cheap to read again.
 */
final class TtlCache<K, V> {
    static final int MAX_ENTRIES = 100_000;

    private record Entry<V>(V value, long readAtNanos) {
    }

    private final Map<K, Entry<V>> entries = new ConcurrentHashMap<>();

    /** The value read less than the TTL ago, else null. */
    V fresh(K key) {
        Entry<V> e = entries.get(key);
        return e != null && System.nanoTime() - e.readAtNanos() < QueueCatalog.TTL_NANOS ? e.value() : null;
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
        entries.put(key, new Entry<>(value, System.nanoTime()));
    }

    void remove(K key) {
        entries.remove(key);
    }
}
