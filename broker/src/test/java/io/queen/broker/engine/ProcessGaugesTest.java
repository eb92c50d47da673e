package io.queen.broker.engine;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcessGaugesTest {

    @Test
    void readsUserAndSystemTicksCountingFieldsFromTheLastParenthesis() {
        String stat = "4242 (java (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 40 0";
        Optional<ProcessGauges.CpuTimes> t = ProcessGauges.parseStat(stat);
        assertEquals(2_500_000, t.orElseThrow().userMicros());
        assertEquals(750_000, t.orElseThrow().systemMicros());
    }

    @Test
    void aTruncatedStatLineReadsAsUnknown() {
        assertTrue(ProcessGauges.parseStat("1 (x) S 1 2").isEmpty());
        assertTrue(ProcessGauges.parseStat("garbage").isEmpty());
    }

    @Test
    void parsesVmRssKilobytes() {
        assertEquals(1024L * 123456, ProcessGauges.parseKilobytes("   123456 kB").getAsLong());
        assertTrue(ProcessGauges.parseKilobytes("n/a").isEmpty());
    }

    @Test
    void readsThisProcessOnLinux() {
        if (!System.getProperty("os.name").toLowerCase().contains("linux")) {
            return;
        }
        ProcessGauges g = new ProcessGauges();
        assertTrue(g.residentBytes().orElseThrow() > 0);
        assertTrue(g.cpuTimes().orElseThrow().userMicros() >= 0);
    }
}
