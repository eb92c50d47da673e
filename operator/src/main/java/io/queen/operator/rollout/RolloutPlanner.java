package io.queen.operator.rollout;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Chooses the next single step of a broker roll. Pure: the same state always gives the same step.
 *
 * <p>In order: a requested restart is turned into a template change; the schema is applied for the
 * template's broker image by a Job before any pod is touched (a failed Job blocks); a pod the
 * operator deleted is waited for until it is Ready, and a timeout halts the roll instead of pushing
 * on; then outdated pods are deleted one at a time, stuck ones (crash-looping, unpullable,
 * unschedulable, unready for too long: they serve nothing) first, and otherwise only while every
 * broker is Ready (never two brokers down), highest ordinal first.
 */
public final class RolloutPlanner {
    private RolloutPlanner() {
    }

    public static RolloutStep next(RolloutState state) {
        if (state.restartRequestedAt() != null && !state.restartRequestedAt().equals(state.restartAppliedAt())) {
            return new RolloutStep.RequestRestart(state.restartRequestedAt());
        }
        if (state.schemaKey() != null && !state.schemaKey().equals(state.schemaAppliedFor())) {
            return switch (state.schemaJob()) {
                case ABSENT -> new RolloutStep.RunSchemaJob(state.schemaKey());
                case RUNNING -> new RolloutStep.AwaitSchemaJob(state.schemaKey());
                case FAILED -> new RolloutStep.SchemaJobFailed(state.schemaKey());
                case SUCCEEDED -> new RolloutStep.RecordSchemaApplied(state.schemaKey());
            };
        }
        Optional<RolloutStep> inFlight = awaitInFlight(state);
        if (inFlight.isPresent()) {
            return inFlight.get();
        }
        List<PodState> outdated = state.pods().stream()
                .filter(p -> !p.terminating() && !state.updateRevision().equals(p.revision()))
                .toList();
        if (outdated.isEmpty()) {
            return new RolloutStep.Complete(state.updateRevision());
        }
        Optional<PodState> terminating = state.pods().stream().filter(PodState::terminating).findFirst();
        if (terminating.isPresent()) {
            return new RolloutStep.Wait("pod " + terminating.get().name() + " is terminating");
        }
        Optional<PodState> stuck = outdated.stream().filter(p -> p.stuck() != PodState.Stuck.NO)
                .max(Comparator.comparingInt(PodState::ordinal));
        if (stuck.isPresent()) {
            return new RolloutStep.DeletePod(stuck.get().name(), "outdated and stuck (" + stuck.get().stuck() + ")");
        }
        Optional<PodState> down = state.pods().stream().filter(p -> !p.ready()).findFirst();
        if (down.isPresent()) {
            return new RolloutStep.Wait("pod " + down.get().name() + " is not Ready; never two brokers down");
        }
        if (state.pods().size() < state.replicas()) {
            return new RolloutStep.Wait(state.pods().size() + " of " + state.replicas() + " pods exist; never two brokers down");
        }
        PodState highest = outdated.stream().max(Comparator.comparingInt(PodState::ordinal)).orElseThrow();
        return new RolloutStep.DeletePod(highest.name(), "outdated (revision " + highest.revision() + ")");
    }

    /**
     * The pod deleted last, for the current update revision, is waited for until it is back and
     * Ready; past the timeout the roll halts. A record for an older revision no longer matters: the
     * template changed again and the roll starts over.
     */
    private static Optional<RolloutStep> awaitInFlight(RolloutState state) {
        if (state.inFlight().isEmpty() || !state.inFlight().get().revision().equals(state.updateRevision())) {
            return Optional.empty();
        }
        InFlight inFlight = state.inFlight().get();
        Optional<PodState> pod = state.pods().stream().filter(p -> p.name().equals(inFlight.pod())).findFirst();
        boolean replacedAndReady = pod.map(p -> !p.terminating() && p.ready()
                && state.updateRevision().equals(p.revision())).orElse(false);
        if (replacedAndReady) {
            return Optional.empty();
        }
        if (!state.now().isBefore(inFlight.deletedAt().plus(state.readyTimeout()))) {
            String why = pod.isEmpty() ? "was not re-created"
                    : !state.updateRevision().equals(pod.get().revision()) ? "was not replaced"
                    : "did not become Ready" + (pod.get().stuck() == PodState.Stuck.NO ? "" : " (" + pod.get().stuck() + ")");
            return Optional.of(new RolloutStep.Halt(inFlight.pod(), "pod " + inFlight.pod() + " " + why + " within "
                    + state.readyTimeout().toSeconds() + "s of its restart"));
        }
        return Optional.of(new RolloutStep.AwaitPodReady(inFlight.pod()));
    }
}
