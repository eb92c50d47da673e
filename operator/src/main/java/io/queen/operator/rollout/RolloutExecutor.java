package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;

import java.time.Duration;
import java.util.Optional;

/**
 * One round of a broker roll: {@link RolloutObserver} reads the StatefulSet, its pods and its
 * schema Job; {@link RolloutPlanner} chooses the next step from the {@link RolloutState} the
 * {@link RolloutObservation} gives; {@link RolloutActions} applies it. All roll state lives in the
 * cluster (pod labels, Job status, StatefulSet annotations), so a restarted or newly elected
 * operator carries on where the last one stopped.
 */
public class RolloutExecutor {
    private final RolloutObserver observer;
    private final RolloutActions actions;
    private final Duration readyTimeout;

    /** @param readyTimeout how long a replaced pod may take to become Ready before the roll halts */
    public RolloutExecutor(RolloutObserver observer, RolloutActions actions, Duration readyTimeout) {
        this.observer = observer;
        this.actions = actions;
        this.readyTimeout = readyTimeout;
    }

    /** One planning round: observe, plan, apply. Returns the step applied (empty when the StatefulSet is gone). */
    public Optional<RolloutStep> reconcile(String namespace, String statefulSet) {
        Optional<StatefulSet> found = observer.statefulSet(namespace, statefulSet);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        StatefulSet sts = found.get();
        Optional<RolloutStep.Wait> notYet = RolloutObservation.awaitStatefulSetController(sts);
        if (notYet.isPresent()) {
            return Optional.of(notYet.get());
        }
        RolloutStep step = RolloutPlanner.next(observer.observe(sts).state(readyTimeout));
        actions.apply(sts, step);
        return Optional.of(step);
    }
}
