package io.queen.bench;

/**
 * The figures of one partition count; {@code latency} is null when the latency run is switched off.
 * {@code pushCpu} and {@code ceilingCpu} are each party's CPU per message in the push phase and over
 * the ceiling's measured runs; {@code pushCompilerShare} is the part of the broker's push-phase CPU
 * its JIT compiler threads used (NaN where /proc cannot tell).
 */
record ScenarioResult(int partitions, PushPhase.Outcome push, ConsumePhase.Outcome consume, LatencyRun latency,
                      IdlePopPhase.Outcome idlePop, double brokerPeakRssMb, CpuUse cpu, CeilingPhase.Outcome ceiling,
                      CpuMeter.PerMessage pushCpu, double pushCompilerShare, CpuMeter.PerMessage ceilingCpu) {

    /** CPU seconds of the broker and of this benchmark's JVM over the broker phases, and their wall time. */
    record CpuUse(double brokerSeconds, double clientSeconds, double wallSeconds) {
    }

    /** The fixed-rate run: its push side and its delivery side. */
    record LatencyRun(PushPhase.Outcome push, ConsumePhase.Outcome delivery) {
    }

    /** Our push rate as a fraction of the raw PostgreSQL insert rate. */
    double pushToCeiling() {
        return push.messagesPerSecond() / ceiling.messagesPerSecond();
    }
}
