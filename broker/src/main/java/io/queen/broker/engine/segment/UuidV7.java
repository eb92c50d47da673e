package io.queen.broker.engine.segment;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time-ordered UUID version 7 (RFC 9562): 48-bit unix milliseconds, version 7, a 12-bit counter in {@code rand_a},
 * variant 2 and 62 random bits. Ids are strictly increasing within the JVM, across threads.
 */
public final class UuidV7 {
    /** Last issued {@code (unixMillis << 12) | counter}; one CAS keeps time and counter consistent. */
    private static final AtomicLong LAST = new AtomicLong();

    private UuidV7() {
    }

    public static UUID next() {
        long now = System.currentTimeMillis() << 12;
        long prev;
        long next;
        do {
            prev = LAST.get();
            // Counter overflow (>4096 ids in one ms) or a clock step back borrows from the next millisecond,
            // which keeps ordering strict at the cost of running slightly ahead of the clock.
            next = Math.max(now, prev + 1);
        } while (!LAST.compareAndSet(prev, next));
        long msb = ((next >>> 12) << 16) | 0x7000L | (next & 0xFFFL);
        // Uniqueness across brokers rests on these 62 bits; ids are not secrets, so a fast PRNG is enough.
        long lsb = (ThreadLocalRandom.current().nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }

    /** Unix milliseconds embedded in a version 7 UUID. */
    public static long timestampMillis(UUID id) {
        return id.getMostSignificantBits() >>> 16;
    }
}
