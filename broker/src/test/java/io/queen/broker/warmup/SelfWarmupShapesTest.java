package io.queen.broker.warmup;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the warm-up splits its messages between large and small requests. */
class SelfWarmupShapesTest {

    @Test
    void largeRequestsFirstThenSmallOnesOverManyPartitionsAndNoMessageIsLostInTheSplit() {
        List<WarmupPhase.Shape> shapes = SelfWarmup.shapes(50_000);
        assertEquals(List.of(new WarmupPhase.Shape("large", 100, 10, 30_000),
                new WarmupPhase.Shape("small", 10, 100, 20_000)), shapes);
        for (long messages : new long[] {1, 7, 2_000, 50_001, 100_000_000}) {
            List<WarmupPhase.Shape> split = SelfWarmup.shapes(messages);
            assertEquals(messages, split.stream().mapToLong(WarmupPhase.Shape::messages).sum(), "split of " + messages);
            assertTrue(split.get(0).pushBatch() > split.get(1).pushBatch());
        }
    }
}
