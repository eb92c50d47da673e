package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SurfaceOptionsTest {
    @Test
    void aModeFlagSelectsTheSurfaceRunAndNoneKeepsTheDefaultRun() {
        assertEquals(SurfaceOptions.Mode.KV, SurfaceOptions.selected("--clients", "4", "--kv"));
        assertEquals(SurfaceOptions.Mode.TIMERS, SurfaceOptions.selected("--timers"));
        assertEquals(SurfaceOptions.Mode.STREAMS, SurfaceOptions.selected("--streams", "--help"));
        assertNull(SurfaceOptions.selected("--partitions", "10"));
        assertNull(SurfaceOptions.selected());
    }

    @Test
    void defaultsMatchTheUsageText() {
        SurfaceOptions kv = SurfaceOptions.parse("--kv");
        assertEquals(8, kv.clients());
        assertEquals(10, kv.seconds());
        assertEquals(5, kv.warmupSeconds());
        assertEquals(List.of(1, 100), kv.kvBatches());
        assertEquals(10_000, kv.kvKeys());
        SurfaceOptions timers = SurfaceOptions.parse("--timers");
        assertEquals(30, timers.seconds());
        assertEquals(1000, timers.timerRate());
        assertEquals(1000, timers.timerDelayMs());
        assertEquals(10, timers.timerBatch());
        SurfaceOptions streams = SurfaceOptions.parse("--streams");
        assertEquals(10, streams.streamPartitions());
        assertEquals(100, streams.streamBatch());
        assertEquals(2000, streams.streamRate());
        assertEquals(1000, streams.streamWindowMs());
        assertEquals(200, streams.streamFlushMs());
        assertEquals(8, streams.clients());
        assertEquals(512, streams.brokerMemoryMb());
    }

    @Test
    void flagsTakeBothSpellings() {
        SurfaceOptions o = SurfaceOptions.parse("--kv", "--clients=2", "--kv-batches", "5,50", "--seconds", "3",
                "--warmup-seconds=0", "--kv-keys", "200");
        assertEquals(2, o.clients());
        assertEquals(List.of(5, 50), o.kvBatches());
        assertEquals(3, o.seconds());
        assertEquals(0, o.warmupSeconds());
        assertEquals(200, o.kvKeys());
    }

    @Test
    void streamFlagsSetRateWindowAndFlush() {
        SurfaceOptions o = SurfaceOptions.parse("--streams", "--stream-rate", "500", "--stream-window-seconds=0.25",
                "--stream-flush-ms", "100", "--stream-partitions", "4");
        assertEquals(500, o.streamRate());
        assertEquals(250, o.streamWindowMs());
        assertEquals(100, o.streamFlushMs());
        assertEquals(4, o.streamPartitions());
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--streams",
                "--stream-window-seconds", "0.0005"), "under a millisecond");
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--streams", "--stream-rate", "0"));
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--streams", "--stream-messages", "5"),
                "the preload is gone");
    }

    @Test
    void rejectsBadFlagsAndMixedModes() {
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--kv", "--timers"));
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--clients", "2"), "no mode");
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--kv", "--messages", "5"),
                "a flag of the default run");
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--kv", "--clients", "0"));
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--timers", "--timer-rate", "-1"));
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--kv", "--kv-batches", "300"),
                "over the broker's 256 operations a call");
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--kv", "--kv-keys", "100",
                "--clients", "8"), "fewer keys per client than a batch of 100 names");
        assertThrows(IllegalArgumentException.class, () -> SurfaceOptions.parse("--streams", "--seconds"));
    }

    @Test
    void theBrokerRunsWithTheKvLimiterOutOfTheWay() {
        var env = SurfaceOptions.brokerEnvironment();
        assertEquals("0", env.get("QUEEN_KV_CELL_RATE"), "0 switches the cell rate off");
        for (String rate : List.of("QUEEN_KV_WRITE_RATE", "QUEEN_KV_READ_RATE", "QUEEN_KV_WRITE_BURST",
                "QUEEN_KV_READ_BURST")) {
            long v = Long.parseLong(env.get(rate));
            assertEquals(true, v >= 100_000_000, rate + " is far above any rate the bench reaches: " + v);
        }
    }
}
