package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.queen.operator.rollout.PodState.Stuck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the planner is told about a StatefulSet, its pods and its schema Job: objects in, state out, no API server. */
class RolloutObservationTest {
    private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String IMAGE = "queen-broker:2";

    @Test
    void aTemplateTheStatefulSetControllerHasNotObservedIsWaitedFor() {
        StatefulSet stale = sts(IMAGE, Map.of());
        stale.getStatus().setObservedGeneration(stale.getMetadata().getGeneration() - 1);

        var wait = RolloutObservation.awaitStatefulSetController(stale).orElseThrow();

        assertTrue(wait.reason().contains("generation 4"), wait.reason());
    }

    @Test
    void aStatefulSetWithoutStatusIsWaitedFor() {
        StatefulSet fresh = sts(IMAGE, Map.of());
        fresh.setStatus(null);

        assertTrue(RolloutObservation.awaitStatefulSetController(fresh).isPresent());
    }

    @Test
    void anObservedStatefulSetWithoutUpdateRevisionIsWaitedFor() {
        StatefulSet sts = sts(IMAGE, Map.of());
        sts.getStatus().setUpdateRevision(null);

        assertEquals(Optional.of(new RolloutStep.Wait("no status.updateRevision yet")),
                RolloutObservation.awaitStatefulSetController(sts));
    }

    @Test
    void anObservedStatefulSetWithAnUpdateRevisionCanBePlanned() {
        assertEquals(Optional.empty(), RolloutObservation.awaitStatefulSetController(sts(IMAGE, Map.of())));
        StatefulSet uncounted = sts(IMAGE, Map.of());
        uncounted.getMetadata().setGeneration(null);
        uncounted.getStatus().setObservedGeneration(null);
        assertEquals(Optional.empty(), RolloutObservation.awaitStatefulSetController(uncounted));
    }

    @Test
    void theSchemaJobIsReadOnlyWhileTheTemplatesImageHasNoSchemaApplied() {
        assertEquals(Optional.of(SchemaJobs.jobName("broker", IMAGE)), RolloutObservation.schemaJobToRead(
                sts(IMAGE, Map.of(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, "queen-broker:1"))));
        assertEquals(Optional.of(SchemaJobs.jobName("broker", IMAGE)), RolloutObservation.schemaJobToRead(sts(IMAGE, Map.of())));
        assertEquals(Optional.empty(), RolloutObservation.schemaJobToRead(
                sts(IMAGE, Map.of(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, IMAGE))));
    }

    @Test
    void theStateCarriesTheAnnotationsTheRevisionAndTheReplicas() {
        StatefulSet sts = sts(IMAGE, Map.of(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, "queen-broker:1",
                RolloutAnnotations.RESTART_ANNOTATION, "t2",
                RolloutAnnotations.IN_FLIGHT_ANNOTATION, "broker-2 rev-new 2026-01-01T11:59:00Z"));
        sts.getSpec().getTemplate().getMetadata().setAnnotations(Map.of(RolloutAnnotations.RESTART_ANNOTATION, "t1"));

        RolloutState state = new RolloutObservation(sts, List.of(), job(null, null), NOW).state(TIMEOUT);

        assertEquals(3, state.replicas());
        assertEquals("rev-new", state.updateRevision());
        assertEquals(IMAGE, state.schemaKey());
        assertEquals("queen-broker:1", state.schemaAppliedFor());
        assertEquals(SchemaJobState.RUNNING, state.schemaJob());
        assertEquals("t2", state.restartRequestedAt());
        assertEquals("t1", state.restartAppliedAt());
        assertEquals(Optional.of(new InFlight("broker-2", "rev-new", Instant.parse("2026-01-01T11:59:00Z"))), state.inFlight());
        assertEquals(NOW, state.now());
        assertEquals(TIMEOUT, state.readyTimeout());
    }

    @Test
    void replicasDefaultToOneAndAnUnreadableInFlightRecordIsIgnored() {
        StatefulSet sts = sts(IMAGE, Map.of(RolloutAnnotations.IN_FLIGHT_ANNOTATION, "edited by hand"));
        sts.getSpec().setReplicas(null);

        RolloutState state = new RolloutObservation(sts, List.of(), null, NOW).state(TIMEOUT);

        assertEquals(1, state.replicas());
        assertEquals(Optional.empty(), state.inFlight());
        assertNull(state.restartAppliedAt());
    }

    @Test
    void aSchemaJobAlreadyRecordedCountsAsAbsent() {
        StatefulSet sts = sts(IMAGE, Map.of(RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION, IMAGE));

        RolloutState state = new RolloutObservation(sts, List.of(), job(1, null), NOW).state(TIMEOUT);

        assertEquals(SchemaJobState.ABSENT, state.schemaJob());
    }

    @Test
    void onlyTheStatefulSetsOwnPodsCountWithTheirOrdinals() {
        Pod terminating = pod("broker-12", "rev-old", true);
        terminating.getMetadata().setDeletionTimestamp(NOW.toString());
        List<Pod> pods = List.of(pod("broker-0", "rev-new", true), terminating, pod("broker-canary", "rev-new", true),
                pod("other-1", "rev-new", true), pod("broker-1-debug", "rev-new", true));

        List<PodState> states = new RolloutObservation(sts(IMAGE, Map.of()), pods, null, NOW).state(TIMEOUT).pods();

        assertEquals(List.of(new PodState("broker-0", 0, "rev-new", true, false, Stuck.NO, NOW.minusSeconds(600)),
                new PodState("broker-12", 12, "rev-old", true, true, Stuck.NO, NOW.minusSeconds(600))), states);
    }

    @ParameterizedTest
    @CsvSource({"CrashLoopBackOff, CRASH_LOOP", "ImagePullBackOff, IMAGE_PULL", "ErrImagePull, IMAGE_PULL",
            "InvalidImageName, IMAGE_PULL", "ContainerCreating, NO"})
    void aWaitingContainerSaysWhetherThePodIsStuck(String reason, Stuck expected) {
        Pod pod = pod("broker-0", "rev-old", false);
        pod.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder().withName("broker")
                .withNewState().withNewWaiting().withReason(reason).endWaiting().endState().build()));

        assertEquals(expected, RolloutObservation.stuckReason(pod));
    }

    @Test
    void anUnschedulablePodIsStuck() {
        Pod pod = pod("broker-0", "rev-old", false);
        pod.getStatus().getConditions().add(new PodConditionBuilder().withType("PodScheduled").withStatus("False")
                .withReason("Unschedulable").build());

        assertEquals(Stuck.UNSCHEDULABLE, RolloutObservation.podState(pod, 0, NOW, TIMEOUT).stuck());
    }

    @Test
    void aReadyPodIsNeverStuck() {
        Pod pod = pod("broker-0", "rev-old", true);
        pod.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder().withName("sidecar")
                .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState().build()));

        assertEquals(Stuck.NO, RolloutObservation.podState(pod, 0, NOW, TIMEOUT).stuck());
    }

    @Test
    void aPodIsUnreadyTooLongCountingFromItsReadyTransitionNotItsCreation() {
        // An hour after the pod started, it turned unready 5 s ago: not stuck yet (the timeout is 30 s).
        Pod recent = pod("broker-0", "rev-old", false, NOW.minus(Duration.ofHours(1)), NOW.minusSeconds(5));
        PodState observed = RolloutObservation.podState(recent, 0, NOW, TIMEOUT);
        assertFalse(observed.ready());
        assertEquals(Stuck.NO, observed.stuck());

        Pod longAgo = pod("broker-0", "rev-old", false, NOW.minus(Duration.ofHours(1)), NOW.minus(TIMEOUT));
        assertEquals(Stuck.UNREADY_TOO_LONG, RolloutObservation.podState(longAgo, 0, NOW, TIMEOUT).stuck());
    }

    @Test
    void aPodTheKubeletHasNotReportedOnCountsFromItsCreation() {
        Pod young = new PodBuilder().withNewMetadata().withName("broker-0")
                .withCreationTimestamp(NOW.minusSeconds(29).toString()).endMetadata().build();
        assertEquals(Stuck.NO, RolloutObservation.podState(young, 0, NOW, TIMEOUT).stuck());

        young.getMetadata().setCreationTimestamp(NOW.minus(TIMEOUT).toString());
        assertEquals(Stuck.UNREADY_TOO_LONG, RolloutObservation.podState(young, 0, NOW, TIMEOUT).stuck());
    }

    @Test
    void theSchemaJobStateComesFromItsStatus() {
        assertEquals(SchemaJobState.ABSENT, RolloutObservation.jobState(null));
        assertEquals(SchemaJobState.RUNNING, RolloutObservation.jobState(new JobBuilder().withNewMetadata().endMetadata().build()));
        assertEquals(SchemaJobState.RUNNING, RolloutObservation.jobState(job(0, "False")));
        assertEquals(SchemaJobState.SUCCEEDED, RolloutObservation.jobState(job(1, null)));
        assertEquals(SchemaJobState.FAILED, RolloutObservation.jobState(job(null, "True")));
    }

    /** Three replicas, generation 4 observed, update revision rev-new. */
    private static StatefulSet sts(String image, Map<String, String> annotations) {
        return new StatefulSetBuilder()
                .withNewMetadata().withName("broker").withNamespace("queen").withGeneration(4L)
                    .withAnnotations(new HashMap<>(annotations)).endMetadata()
                .withNewSpec().withReplicas(3)
                    .withNewTemplate().withNewMetadata().endMetadata()
                        .withNewSpec().addNewContainer().withName(SchemaJobs.BROKER_CONTAINER).withImage(image).endContainer().endSpec()
                    .endTemplate()
                .endSpec()
                .withNewStatus().withObservedGeneration(4L).withUpdateRevision("rev-new").endStatus()
                .build();
    }

    private static Pod pod(String name, String revision, boolean ready) {
        return pod(name, revision, ready, NOW.minusSeconds(600), NOW.minusSeconds(590));
    }

    private static Pod pod(String name, String revision, boolean ready, Instant created, Instant readyChanged) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withCreationTimestamp(created.toString())
                    .addToLabels(RolloutAnnotations.REVISION_LABEL, revision).endMetadata()
                .withNewStatus().addNewCondition().withType("Ready").withStatus(ready ? "True" : "False")
                    .withLastTransitionTime(readyChanged.toString()).endCondition().endStatus()
                .build();
    }

    private static Job job(Integer succeeded, String failedCondition) {
        var status = new JobBuilder().withNewMetadata().withName(SchemaJobs.jobName("broker", IMAGE)).endMetadata()
                .withNewStatus().withSucceeded(succeeded);
        if (failedCondition != null) {
            status.addNewCondition().withType("Failed").withStatus(failedCondition).endCondition();
        }
        return status.endStatus().build();
    }
}
