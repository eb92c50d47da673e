package io.queen.bench;

import java.util.Comparator;
import java.util.List;

/**
 * The figures of one partition count; {@code latency} is null when the latency run is switched off.
 * The push and consume figures are each the median of the throughput {@code rounds} (by rate);
 * {@code ceilingCpu} is each party's CPU per message over the ceiling's measured runs.
 */
record ScenarioResult(int partitions, List<Round> rounds, LatencyRun latency, IdlePopPhase.Outcome idlePop,
                      double brokerPeakRssMb, CpuUse cpu, CeilingPhase.Outcome ceiling,
                      CpuMeter.PerMessage ceilingCpu) {

    ScenarioResult {
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("no throughput round");
        }
        rounds = List.copyOf(rounds);
    }

    /**
     * One push of all messages and their consumption. {@code pushCpu} is each party's CPU per message
     * in the push; {@code pushCompilerShare} the part of the broker's push CPU its JIT compiler
     * threads used (NaN where /proc cannot tell).
     */
    record Round(PushPhase.Outcome push, CpuMeter.PerMessage pushCpu, double pushCompilerShare,
                 ConsumePhase.Outcome consume) {
    }

    /** CPU seconds of the broker and of this benchmark's JVM over the broker phases, and their wall time. */
    record CpuUse(double brokerSeconds, double clientSeconds, double wallSeconds) {
    }

    /** The fixed-rate run: its push side and its delivery side. */
    record LatencyRun(PushPhase.Outcome push, ConsumePhase.Outcome delivery) {
    }

    /** The round of the median push rate: its push, CPU and JIT figures go together. */
    Round medianPushRound() {
        return median(Comparator.comparingDouble(r -> r.push().messagesPerSecond()));
    }

    PushPhase.Outcome push() {
        return medianPushRound().push();
    }

    CpuMeter.PerMessage pushCpu() {
        return medianPushRound().pushCpu();
    }

    double pushCompilerShare() {
        return medianPushRound().pushCompilerShare();
    }

    /** The consume phase of the median consume rate. */
    ConsumePhase.Outcome consume() {
        return median(Comparator.comparingDouble(r -> r.consume().messagesPerSecond())).consume();
    }

    /** Every consume phase delivered everything, the latency run's included. */
    boolean complete() {
        return rounds.stream().allMatch(r -> r.consume().complete())
                && (latency == null || latency.delivery().complete());
    }

    /** Our push rate as a fraction of the raw PostgreSQL insert rate. */
    double pushToCeiling() {
        return push().messagesPerSecond() / ceiling.messagesPerSecond();
    }

    private Round median(Comparator<Round> order) {
        return rounds.stream().sorted(order).toList().get(rounds.size() / 2);
    }
}
