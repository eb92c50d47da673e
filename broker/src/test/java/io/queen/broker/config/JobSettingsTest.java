package io.queen.broker.config;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobSettingsTest {

    @Test
    void defaultsAreTheReferenceBrokers() {
        JobSettings s = JobSettings.from(new Env(Map.of()));
        assertEquals(5_000, s.retentionIntervalMs());
        assertEquals(1_000, s.retentionBatchSize());
        assertEquals(30, s.partitionCleanupDays());
        assertTrue(s.partitionCleanupEnabled());
        assertEquals(10_000, s.statsIntervalMs());
        assertEquals(600_000, s.retainedBytesIntervalMs());
        assertEquals(60_000, s.metricsFlushMs());
        assertEquals(90, s.metricsRetentionDays());
        assertEquals(1_000, s.floorMs());
        assertTrue(s.serverId().startsWith("queen-"), s.serverId());
    }

    @Test
    void valuesBelowTheirMinimumAreClampedNotFatal() {
        JobSettings s = JobSettings.from(new Env(Map.of("STATS_INTERVAL_MS", "10", "METRICS_FLUSH_MS", "0",
                "PARTITION_CLEANUP_DAYS", "0", "RETENTION_BATCH_SIZE", "-5", "RETENTION_INTERVAL", "0")));
        assertEquals(1_000, s.statsIntervalMs());
        assertEquals(1_000, s.metricsFlushMs());
        assertEquals(1, s.partitionCleanupDays());
        assertEquals(1, s.retentionBatchSize());
        assertEquals(1, s.retentionIntervalMs());
    }

    @Test
    void theTestFloorLowersTheStatsAndMetricsMinimumOnlyWhenSet() {
        JobSettings s = JobSettings.from(new Env(Map.of("QUEEN_TEST_JOBS_FLOOR_MS", "50",
                "STATS_INTERVAL_MS", "200", "METRICS_FLUSH_MS", "20")));
        assertEquals(200, s.statsIntervalMs());
        assertEquals(50, s.metricsFlushMs());
        assertEquals(50, s.floorMs());
    }

    @Test
    void aValueThatIsNotANumberStopsTheBootNamingTheVariable() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> JobSettings.from(new Env(Map.of("RETENTION_INTERVAL", "5s"))));
        assertTrue(e.getMessage().contains("RETENTION_INTERVAL"), e.getMessage());
        assertThrows(ConfigException.class,
                () -> JobSettings.from(new Env(Map.of("QUEEN_PARTITION_CLEANUP_ENABLED", "maybe"))));
        assertThrows(ConfigException.class,
                () -> JobSettings.from(new Env(Map.of("STATS_INTERVAL_MS", "99999999999999"))));
        assertFalse(JobSettings.from(new Env(Map.of("QUEEN_PARTITION_CLEANUP_ENABLED", "off")))
                .partitionCleanupEnabled());
    }

    @Test
    void theServerIdComesFromQueenServerIdThenHostname() {
        assertEquals("broker-a", JobSettings.from(new Env(Map.of("QUEEN_SERVER_ID", "broker-a", "HOSTNAME", "h")))
                .serverId());
        assertEquals("pod-7", JobSettings.from(new Env(Map.of("HOSTNAME", "pod-7"))).serverId());
    }
}
