package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;

import java.time.Duration;
import java.util.List;

/**
 * Rolls the broker StatefulSets (labelled {@value #SELECTOR}, {@code updateStrategy: OnDelete}) one
 * pod at a time through {@link RolloutExecutor}. Pod and Job changes of a StatefulSet trigger its
 * next round at once; the reschedule is the safety net. Not generation-aware: pod readiness and Job
 * status matter, not only the StatefulSet's spec.
 */
@ControllerConfiguration(name = BrokerRolloutReconciler.NAME, generationAwareEventProcessing = false,
        informer = @Informer(labelSelector = BrokerRolloutReconciler.SELECTOR))
public class BrokerRolloutReconciler implements Reconciler<StatefulSet> {
    public static final String NAME = "broker-rollout";
    public static final String SELECTOR = "app.kubernetes.io/part-of=queen,app.kubernetes.io/component=broker";

    private final RolloutExecutor executor;
    private final Duration poll;
    private final Duration haltedPoll;

    /**
     * @param poll       next look while a roll step is in progress
     * @param haltedPoll next look while the roll is halted or blocked (a human is expected to act)
     */
    public BrokerRolloutReconciler(RolloutExecutor executor, Duration poll, Duration haltedPoll) {
        this.executor = executor;
        this.poll = poll;
        this.haltedPoll = haltedPoll;
    }

    @Override
    public List<EventSource<?, StatefulSet>> prepareEventSources(EventSourceContext<StatefulSet> context) {
        var pods = InformerEventSourceConfiguration.from(Pod.class, StatefulSet.class)
                .withNamespacesInheritedFromController()
                .withLabelSelector("app.kubernetes.io/part-of=queen")
                .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(StatefulSet.class))
                .build();
        var jobs = InformerEventSourceConfiguration.from(Job.class, StatefulSet.class)
                .withNamespacesInheritedFromController()
                .withLabelSelector("app.kubernetes.io/part-of=queen")
                .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(StatefulSet.class))
                .build();
        return List.of(new InformerEventSource<>(pods, context), new InformerEventSource<>(jobs, context));
    }

    @Override
    public UpdateControl<StatefulSet> reconcile(StatefulSet sts, Context<StatefulSet> context) {
        var step = executor.reconcile(sts.getMetadata().getNamespace(), sts.getMetadata().getName());
        if (step.isEmpty() || step.get() instanceof RolloutStep.Complete) {
            return UpdateControl.noUpdate();
        }
        boolean humanNeeded = step.get() instanceof RolloutStep.Halt || step.get() instanceof RolloutStep.SchemaJobFailed;
        return UpdateControl.<StatefulSet>noUpdate().rescheduleAfter(humanNeeded ? haltedPoll : poll);
    }
}
