package io.queen.bench;

import java.util.Comparator;
import java.util.List;

/**
 * The figures of one partition count; {@code latency} is null when the latency run is switched off.
 * {@code ceilings.get(i)} is the raw PostgreSQL ceiling run straight after {@code rounds.get(i)}.
 * The push, consume and ceiling figures are each the median of their runs (by rate);
 * {@code ceilingCpu} is each party's CPU per message over the ceiling's runs.
 */
record ScenarioResult(int partitions, List<Round> rounds, List<CeilingPhase.Outcome> ceilings, LatencyRun latency,
                      IdlePopPhase.Outcome idlePop, double brokerPeakRssMb, CpuUse cpu,
                      CpuMeter.PerMessage ceilingCpu) {

    ScenarioResult {
        if (rounds.isEmpty() || ceilings.size() != rounds.size()) {
            throw new IllegalArgumentException(rounds.size() + " throughput rounds and " + ceilings.size()
                    + " ceiling runs: one of each per round is needed");
        }
        rounds = List.copyOf(rounds);
        ceilings = List.copyOf(ceilings);
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

    /**
     * The fixed-rate run: its push side, its delivery side, how often the host stalled meanwhile, and
     * each party's CPU per message delivered (at a low rate a message's cost is mostly hand-offs, not
     * bytes, so it differs from the push phase's figure).
     */
    record LatencyRun(PushPhase.Outcome push, ConsumePhase.Outcome delivery, HostStalls.Outcome hostStalls,
                      CpuMeter.PerMessage cpu) {
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

    /** The ceiling run of the median rate. */
    CeilingPhase.Outcome ceiling() {
        return ceilings.stream().sorted(Comparator.comparingDouble(CeilingPhase.Outcome::messagesPerSecond)).toList()
                .get(ceilings.size() / 2);
    }

    /** Each round's push rate as a fraction of its own ceiling run's rate, in round order. */
    List<Double> pushToCeilingByRound() {
        return java.util.stream.IntStream.range(0, rounds.size())
                .mapToObj(i -> rounds.get(i).push().messagesPerSecond() / ceilings.get(i).messagesPerSecond())
                .toList();
    }

    /**
     * Our push rate as a fraction of the raw PostgreSQL insert rate: the median of the rounds'
     * ratios, each push against the ceiling of its own minute.
     */
    double pushToCeiling() {
        return pushToCeilingByRound().stream().sorted().toList().get(rounds.size() / 2);
    }

    private Round median(Comparator<Round> order) {
        return rounds.stream().sorted(order).toList().get(rounds.size() / 2);
    }
}
