package io.queen.broker.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The consumer-group listing's state: Lagging beats everything, then Stable once anything was consumed. */
class ConsumerGroupStateTest {

    @Test
    void aGroupWhoseOldestUnconsumedMessageIsOverFiveMinutesOldIsLagging() {
        assertEquals("Lagging", ConsumerGroupAdminService.state(301, 0));
        assertEquals("Lagging", ConsumerGroupAdminService.state(7200, 42));
    }

    @Test
    void aGroupWithinFiveMinutesIsStableOnceItConsumedAndDeadBefore() {
        assertEquals("Stable", ConsumerGroupAdminService.state(300, 1));
        assertEquals("Stable", ConsumerGroupAdminService.state(0, 10));
        assertEquals("Dead", ConsumerGroupAdminService.state(300, 0));
        assertEquals("Dead", ConsumerGroupAdminService.state(0, 0));
    }
}
