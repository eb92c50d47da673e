package io.queen.bench;

/** The figures of one partition count; {@code latency} is null when the latency run is switched off. */
record ScenarioResult(int partitions, PushPhase.Outcome push, ConsumePhase.Outcome consume, LatencyRun latency,
                      double brokerPeakRssMb, CpuUse cpu, CeilingPhase.Outcome ceiling) {

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
