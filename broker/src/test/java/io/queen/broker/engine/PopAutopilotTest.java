package io.queen.broker.engine;

import io.queen.broker.config.EngineSettings.AutopilotMode;
import io.queen.broker.lifecycle.ManualTicker;
import io.queen.broker.support.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PopAutopilotTest {
    /** The autopilot's clock: it moves only when a test moves it. */
    private final ManualTicker now = new ManualTicker();
    private final PopAutopilot pilot = new PopAutopilot(AutopilotMode.ON, 100, 10_000_000_000L, now);

    @Test
    void aKnobThePopSentIsNeverTouched() {
        assertEquals(new PopAutopilot.Plan(3, 250), pilot.plan("t/q/g", 500, 3, 250));
        assertEquals(new PopAutopilot.Plan(3, 100), pilot.plan("t/q/g", 500, 3, null));
        assertEquals(250, pilot.plan("t/q/h", 500, null, 250).batch());
    }

    @Test
    void theWidthCoversTheReadyPartitionsSharedAmongThePopsInFlight() {
        try (PopAutopilot.Live a = pilot.enter("t/q/g")) {
            assertEquals(1, pilot.plan("t/q/g", 0, null, null).partitions(), "nothing ready: one partition");
            assertEquals(40, pilot.plan("t/q/g", 40, null, null).partitions(), "widens at once");
            assertEquals(64, pilot.plan("t/q/g", 1000, null, null).partitions(), "never past 64");
        }
        PopAutopilot.Live[] four = {pilot.enter("t/q/four"), pilot.enter("t/q/four"), pilot.enter("t/q/four"),
                pilot.enter("t/q/four")};
        assertEquals(10, pilot.plan("t/q/four", 40, null, null).partitions(), "40 ready among 4 pops");
        for (PopAutopilot.Live l : four) {
            l.close();
        }
    }

    @Test
    void theWidthNarrowsOnlyWhenTheSmoothedCountStaysUnderHalfOfIt() {
        String lane = "t/q/narrow";
        assertEquals(40, pilot.plan(lane, 40, null, null).partitions());
        assertEquals(40, pilot.plan(lane, 25, null, null).partitions(), "one smaller sample does not narrow it");
        int width = 40;
        for (int i = 0; i < 30 && width == 40; i++) {
            width = pilot.plan(lane, 0, null, null).partitions();
        }
        assertTrue(width < 20 && width >= 1, "narrowed once the count stayed low: " + width);
        assertEquals(30, pilot.plan(lane, 30, null, null).partitions(), "and widens again at once");
    }

    @Test
    void aLaneIdleForASecondStartsAgainFromOne() {
        assertEquals(50, pilot.plan("t/q/idle", 50, null, null).partitions());
        now.advance(Duration.ofNanos(PopAutopilot.IDLE_NANOS));
        assertEquals(50, pilot.plan("t/q/idle", 5, null, null).partitions(), "a second is not yet idle");
        now.advance(Duration.ofNanos(PopAutopilot.IDLE_NANOS + 1));
        assertEquals(5, pilot.plan("t/q/idle", 5, null, null).partitions(), "not the width of the last burst");
    }

    @Test
    void aDelegatedBatchIsTheConfiguredOne() {
        assertEquals(100, pilot.plan("t/q/b", 3, 2, null).batch());
        assertEquals(700, new PopAutopilot(AutopilotMode.ON, 700).plan("t/q/b", 3, 2, null).batch());
    }

    @Test
    void theModesSayWhetherALaneIsKeptAndWhetherItsPlanIsApplied() {
        assertTrue(pilot.active());
        assertFalse(pilot.shadow());
        PopAutopilot shadow = new PopAutopilot(AutopilotMode.SHADOW, 100);
        assertTrue(shadow.active());
        assertTrue(shadow.shadow());
        assertFalse(new PopAutopilot(AutopilotMode.OFF, 100).active());
    }

    @Test
    void shadowReportsTheLatestDecisionAtMostOncePerWindow() {
        PopAutopilot shadow = new PopAutopilot(AutopilotMode.SHADOW, 100, 60_000_000_000L, now);
        try (CapturedLog log = CapturedLog.of(PopAutopilot.class)) {
            assertTrue(shadow.reportShadow("t/q/g", new PopAutopilot.Plan(19, 100), 1, 200));
            now.advance(Duration.ofNanos(59_000_000_000L));
            assertFalse(shadow.reportShadow("t/q/g", new PopAutopilot.Plan(20, 100), 1, 200), "inside the window");
            assertEquals(1, log.messages().size(), log.messages().toString());
            String line = log.messages().get(0);
            assertTrue(line.contains("lane t/q/g would claim partitions=19 batch=100"), line);
            assertTrue(line.contains("the pop claims partitions=1 batch=200"), line);
        }
        PopAutopilot everyTime = new PopAutopilot(AutopilotMode.SHADOW, 100, 0, now);
        try (CapturedLog log = CapturedLog.of(PopAutopilot.class)) {
            everyTime.reportShadow("t/q/g", new PopAutopilot.Plan(2, 100), 1, 200);
            everyTime.reportShadow("t/q/g", new PopAutopilot.Plan(3, 100), 1, 200);
            assertEquals(2, log.messages().size());
            assertTrue(log.messages().get(1).contains("partitions=3"), log.messages().toString());
        }
    }
}
