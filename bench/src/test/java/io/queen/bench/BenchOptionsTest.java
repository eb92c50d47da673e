package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class BenchOptionsTest {
    @Test
    void defaultsMatchTheUsageText() {
        BenchOptions o = BenchOptions.parse();
        assertEquals(200_000, o.messages());
        assertEquals(List.of(10, 10_000), o.partitionsList());
        assertEquals(100, o.batch());
        assertEquals(30_000, o.latencyMessages());
        assertEquals(50_000, o.warmupMessages());
        assertEquals(512, o.brokerMemoryMb());
    }

    @Test
    void theBrokerRunsWithTheChartsHeapFlagsUnlessSwitchedOff() {
        assertEquals(List.of("-XX:MaxRAM=2048m", "-XX:MaxRAMPercentage=20.0", "-XX:MinRAMPercentage=20.0"), BrokerProcess.heapFlags(BenchOptions.parse("--broker-memory-mb", "2048")
                .brokerMemoryMb()));
        assertEquals(List.of(), BrokerProcess.heapFlags(BenchOptions.parse("--broker-memory-mb=0").brokerMemoryMb()));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--broker-memory-mb", "-5"));
    }

    @Test
    void warmUpIsWholeRequestsAndCanBeSwitchedOff() {
        assertEquals(300, BenchOptions.parse("--warmup-messages", "399", "--batch", "100").warmupMessages());
        assertEquals(0, BenchOptions.parse("--warmup-messages", "0").warmupMessages());
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--warmup-messages", "-1"));
    }

    @Test
    void roundsMessagesUpToWholeRequests() {
        BenchOptions o = BenchOptions.parse("--messages", "250", "--batch=100", "--partitions", "3");
        assertEquals(300, o.messages());
        assertEquals(3, o.requests());
        assertEquals(List.of(3), o.partitionsList());
    }

    @Test
    void rejectsUnknownAndBadFlags() {
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--nope", "1"));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--messages", "0"));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--rate"));
    }
}
