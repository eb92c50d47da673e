package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CpuMeterTest {
    @Test
    void theClientsCpuGrowsByTheWorkDone() {
        CpuMeter meter = new CpuMeter(0, false);
        CpuMeter.Sample before = meter.sample();
        // Spin until this thread has had 300 ms of CPU by the JVM's own clock (not 300 ms of wall time:
        // on a loaded machine those gave the thread as little as 80 ms), then compare the meter's.
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long wallEnd = System.nanoTime() + 60_000_000_000L;
        long spin = 0;
        while (threads.getCurrentThreadCpuTime() - cpuStart < 300_000_000L && System.nanoTime() < wallEnd) {
            spin++;
        }
        CpuMeter.Sample after = meter.sample();
        assertTrue(spin > 0);
        // 300 ms of CPU, measured by the meter in 10 ms ticks.
        assertTrue(after.client() - before.client() >= 0.2, before + " -> " + after);
        assertTrue(Double.isNaN(after.broker()), "no broker pid given");
        assertTrue(Double.isNaN(after.postgres()), "PostgreSQL elsewhere is not measured");
    }

    @Test
    void aBrokerPidIsMeasuredLikeAnyProcess() {
        CpuMeter.Sample s = new CpuMeter(ProcessHandle.current().pid(), false).sample();
        assertFalse(Double.isNaN(s.broker()));
        assertTrue(s.broker() > 0);
    }

    @Test
    void perMessageFiguresAreMicrosecondsAndLeaveOutWhatWasNotMeasured() {
        var before = new CpuMeter.Sample(1.0, Double.NaN, 2.0);
        var after = new CpuMeter.Sample(3.0, Double.NaN, 2.5);
        CpuMeter.PerMessage m = CpuMeter.PerMessage.between(before, after, 100_000);
        assertEquals(20.0, m.broker(), 1e-9);
        assertEquals(5.0, m.client(), 1e-9);
        assertTrue(Double.isNaN(m.postgres()));
        assertEquals(25.0, m.total(), 1e-9);
        assertEquals("broker 20.0 + PostgreSQL not on this host + client 5.0 = 25.0 us CPU/msg", m.describe());
    }

    @Test
    void samplesAddAndSubtractPerPartyKeepingWhatWasNotMeasured() {
        var a = new CpuMeter.Sample(1.0, Double.NaN, 2.0);
        var b = new CpuMeter.Sample(3.0, Double.NaN, 2.5);
        var sum = CpuMeter.Sample.ZERO.plus(b.minus(a)).plus(b.minus(a));
        assertEquals(4.0, sum.broker(), 1e-9);
        assertEquals(1.0, sum.client(), 1e-9);
        assertTrue(Double.isNaN(sum.postgres()));
    }

    @Test
    void onlyLoopbackHostsCountAsLocal() {
        assertTrue(CpuMeter.isLocal("localhost"));
        assertTrue(CpuMeter.isLocal("127.0.0.1"));
        assertTrue(CpuMeter.isLocal("::1"));
        assertFalse(CpuMeter.isLocal("db.example.internal"));
        assertFalse(CpuMeter.isLocal("10.0.0.5"));
    }
}
