package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class WarmthOptionsTest {
    @Test
    void defaultsMatchTheUsageText() {
        WarmthOptions o = WarmthOptions.parse("--cold");
        assertEquals(WarmthOptions.Mode.COLD, o.mode());
        assertEquals(1, o.coldRuns());
        assertEquals(200_000, o.warmMessages());
        assertEquals(120, o.coldMaxSeconds());
        assertEquals(60, o.soakMinutes());
        assertEquals(1000, o.soakRate(), 1e-9);
        assertEquals(4, o.soakConsumers());
        assertEquals(512, o.brokerMemoryMb());
        assertEquals(false, o.aot());
        assertEquals(true, WarmthOptions.parse("--cold", "--aot", "--cold-runs", "2").aot());
        assertEquals(WarmthOptions.DEFAULT_BROKER_WARMUP, o.brokerWarmup());
        assertEquals(0, WarmthOptions.parse("--cold", "--broker-warmup", "0").brokerWarmup());
        assertEquals(5_000, WarmthOptions.parse("--cold", "--broker-warmup=5000").brokerWarmup());
    }

    @Test
    void flagsTakeBothFormsAndTheModeIsFound() {
        WarmthOptions o = WarmthOptions.parse("--soak", "--soak-minutes=3", "--broker-memory-mb", "0");
        assertEquals(WarmthOptions.Mode.SOAK, o.mode());
        assertEquals(3, o.soakMinutes());
        assertEquals(0, o.brokerMemoryMb());
        assertEquals(WarmthOptions.Mode.COLD, WarmthOptions.selected("--cold-runs", "2", "--cold"));
        assertNull(WarmthOptions.selected("--kv"));
        assertEquals(2, WarmthOptions.parse("--cold", "--cold-runs", "2").coldRuns());
    }

    @Test
    void warmMessagesAreWholeRequests() {
        assertEquals(1000, WarmthOptions.parse("--cold", "--warm-messages", "901").warmMessages());
    }

    @Test
    void badFlagsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> WarmthOptions.parse("--cold", "--soak"));
        assertThrows(IllegalArgumentException.class, () -> WarmthOptions.parse("--cold-runs", "2"));
        assertThrows(IllegalArgumentException.class, () -> WarmthOptions.parse("--cold", "--cold-runs", "0"));
        assertThrows(IllegalArgumentException.class, () -> WarmthOptions.parse("--cold", "--messages", "5"));
        assertThrows(IllegalArgumentException.class, () -> WarmthOptions.parse("--soak", "--soak-minutes"));
    }
}
