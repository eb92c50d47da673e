package io.queen.broker.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SurfaceMetricsTest {
    @Test
    void latenessFallsInTheFirstBucketItFitsAndTheBucketsAreCumulative() {
        SurfaceMetrics m = new SurfaceMetrics();
        m.fireLateness(10);       // exactly 0.01 s: the first bucket (le is inclusive)
        m.fireLateness(11);       // just over: the 0.05 s bucket
        m.fireLateness(-3);       // a clock edge: counted as on time
        m.fireLateness(7_200_000); // two hours: only +Inf
        long[] b = m.latenessBuckets();
        assertEquals(SurfaceMetrics.latenessBounds().length + 1, b.length);
        assertEquals(2, b[0]);
        assertEquals(3, b[1]);
        assertEquals(3, b[b.length - 2]);
        assertEquals(4, b[b.length - 1]);
        assertEquals(7_200.021, m.latenessSumSeconds(), 1e-9);
    }

    @Test
    void opNamesMapToBoundedKindsAndUnknownOnesAreNotCounted() {
        SurfaceMetrics m = new SurfaceMetrics();
        m.kvOp(SurfaceMetrics.KvOpKind.of("putIfAbsent"), SurfaceMetrics.KvOutcome.REJECTED);
        m.kvOp(SurfaceMetrics.KvOpKind.of("put"), SurfaceMetrics.KvOutcome.REJECTED);
        m.kvOp(SurfaceMetrics.KvOpKind.of("drop table"), SurfaceMetrics.KvOutcome.APPLIED);
        assertEquals(2, m.kvOps(SurfaceMetrics.KvOpKind.PUT, SurfaceMetrics.KvOutcome.REJECTED));
        long applied = 0;
        for (SurfaceMetrics.KvOpKind k : SurfaceMetrics.KvOpKind.values()) {
            applied += m.kvOps(k, SurfaceMetrics.KvOutcome.APPLIED);
        }
        assertEquals(0, applied);
        m.timerOp(SurfaceMetrics.TimerResult.ofStatus("weird"), 1);
        m.timersRefused(SurfaceMetrics.TimerRefusal.HORIZON, 3);
        assertEquals(3, m.timerOps(SurfaceMetrics.TimerResult.REFUSED));
        assertEquals(1, m.timerRefusals(SurfaceMetrics.TimerRefusal.HORIZON));
        double[] bounds = SurfaceMetrics.latenessBounds();
        bounds[0] = 99;
        assertEquals(0.01, SurfaceMetrics.latenessBounds()[0], "a copy: the exposition's bounds cannot be bent");
    }
}
