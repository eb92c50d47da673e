package io.queen.broker.engine.segment;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UuidV7Test {

    @Test
    void versionAndVariant() {
        UUID id = UuidV7.next();
        assertEquals(7, id.version());
        assertEquals(2, id.variant());
    }

    @Test
    void timestampIsNow() {
        long before = System.currentTimeMillis();
        UUID id = UuidV7.next();
        long after = System.currentTimeMillis();
        long ts = UuidV7.timestampMillis(id);
        assertTrue(ts >= before, "timestamp " + ts + " before " + before);
        // Slack: a burst in another test may have borrowed a few ms of counter space.
        assertTrue(ts <= after + 50, "timestamp " + ts + " after " + after);
    }

    @Test
    void strictlyIncreasingAcrossThreads() throws Exception {
        int threads = 4;
        int perThread = 25_000;
        List<long[]> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<long[]>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Callable<long[]> task = () -> {
                    long[] msbs = new long[perThread];
                    UUID prev = null;
                    for (int i = 0; i < perThread; i++) {
                        UUID id = UuidV7.next();
                        if (prev != null && compareUnsigned(prev, id) >= 0) {
                            throw new AssertionError(prev + " !< " + id);
                        }
                        if (id.version() != 7 || id.variant() != 2) {
                            throw new AssertionError("bad version/variant " + id);
                        }
                        msbs[i] = id.getMostSignificantBits();
                        prev = id;
                    }
                    return msbs;
                };
                futures.add(pool.submit(task));
            }
            for (Future<long[]> f : futures) {
                results.add(f.get());
            }
        }
        // Time + counter is issued by one CAS, so it is unique JVM-wide: ids from all threads form one total order.
        Set<Long> seen = new HashSet<>();
        for (long[] msbs : results) {
            for (long m : msbs) {
                assertTrue(seen.add(m), "duplicate time/counter " + Long.toHexString(m));
            }
        }
        assertEquals(threads * perThread, seen.size());
        assertTrue(compareUnsigned(new UUID(results.getFirst()[0], 0), UuidV7.next()) < 0);
    }

    private static int compareUnsigned(UUID a, UUID b) {
        int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return c != 0 ? c : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
    }
}
