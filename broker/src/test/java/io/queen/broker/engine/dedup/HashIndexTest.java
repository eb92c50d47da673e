package io.queen.broker.engine.dedup;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

class HashIndexTest {
    @Test
    void theHashIndexAgreesWithAMapThroughGrowthDeletionAndShrinking() {
        HashIndex index = new HashIndex();
        Map<List<Long>, Long> model = new HashMap<>();
        List<List<Long>> keys = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(7);
        long nextOffset = 0;
        for (int step = 0; step < 200_000; step++) {
            int op = random.nextInt(10);
            if (op < 5 || keys.isEmpty()) {
                // Few distinct high words, so probe runs collide and wrap often.
                List<Long> k = random.nextInt(4) == 0 && !keys.isEmpty()
                        ? keys.get(random.nextInt(keys.size()))
                        : List.of((long) random.nextInt(8), random.nextLong());
                long off = nextOffset++;
                index.putIfAbsent(k.get(0), k.get(1), off);
                if (model.putIfAbsent(k, off) == null) {
                    keys.add(k);
                }
            } else if (op < 8) {
                int at = random.nextInt(keys.size());
                List<Long> k = keys.get(at);
                long stored = model.get(k);
                // A wrong offset leaves the entry; the right one removes it.
                index.remove(k.get(0), k.get(1), stored + 1);
                index.remove(k.get(0), k.get(1), stored);
                model.remove(k);
                keys.set(at, keys.get(keys.size() - 1));
                keys.remove(keys.size() - 1);
            } else {
                List<Long> k = random.nextBoolean() && !keys.isEmpty()
                        ? keys.get(random.nextInt(keys.size()))
                        : List.of(random.nextLong(), random.nextLong());
                assertEquals(model.getOrDefault(k, -1L), index.get(k.get(0), k.get(1)), "step " + step);
            }
            assertEquals(model.size(), index.size());
        }
        for (List<Long> k : keys) {
            assertEquals(model.get(k), index.get(k.get(0), k.get(1)));
        }
    }
}
