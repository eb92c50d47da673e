package io.queen.operator.rollout;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.queen.operator.EventRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.queen.operator.rollout.RolloutAnnotations.IN_FLIGHT_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.RESTART_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.REVISION_LABEL;
import static io.queen.operator.rollout.RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.STATE_ANNOTATION;

/**
 * Reads one broker StatefulSet, its pods and its schema Job, asks {@link RolloutPlanner} for the
 * next step and applies it through the Kubernetes API. All roll state lives in the cluster (pod
 * labels, Job status, StatefulSet annotations), so a restarted or newly elected operator carries on
 * where the last one stopped. The only writes are: StatefulSet annotations (and the template
 * annotation of a requested restart), one Job create, one pod delete, Events.
 */
public class RolloutExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(RolloutExecutor.class);
    private static final ObjectMapper PATCH_JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final EventRecorder events;
    private final Clock clock;
    private final Duration readyTimeout;
    private final boolean evict;

    /** @param evict replace pods through the eviction API (production); false deletes them (the mock API server has no eviction) */
    public RolloutExecutor(KubernetesClient client, EventRecorder events, Clock clock, Duration readyTimeout, boolean evict) {
        this.client = client;
        this.events = events;
        this.clock = clock;
        this.readyTimeout = readyTimeout;
        this.evict = evict;
    }

    /** One planning round: observe, plan, apply. Returns the step applied (empty when the StatefulSet is gone). */
    public Optional<RolloutStep> reconcile(String namespace, String statefulSet) {
        StatefulSet sts = client.apps().statefulSets().inNamespace(namespace).withName(statefulSet).get();
        if (sts == null) {
            return Optional.empty();
        }
        Long generation = sts.getMetadata().getGeneration();
        Long observed = sts.getStatus() == null ? null : sts.getStatus().getObservedGeneration();
        if (generation != null && (observed == null || observed < generation)) {
            // Until the StatefulSet controller has seen the template, updateRevision is the old one,
            // and every pod would look up to date: a roll would be read as complete.
            return Optional.of(new RolloutStep.Wait("the StatefulSet controller has not observed generation " + generation));
        }
        RolloutState state = observe(sts);
        if (state.updateRevision() == null) {
            // The StatefulSet controller has not processed the template yet.
            return Optional.of(new RolloutStep.Wait("no status.updateRevision yet"));
        }
        RolloutStep step = RolloutPlanner.next(state);
        apply(sts, step);
        return Optional.of(step);
    }

    RolloutState observe(StatefulSet sts) {
        Instant now = clock.instant();
        String namespace = sts.getMetadata().getNamespace();
        String name = sts.getMetadata().getName();
        Map<String, String> annotations = annotations(sts.getMetadata().getAnnotations());
        Map<String, String> templateAnnotations = sts.getSpec().getTemplate().getMetadata() == null ? Map.of()
                : annotations(sts.getSpec().getTemplate().getMetadata().getAnnotations());
        String schemaKey = SchemaJobs.schemaKey(sts).orElse(null);
        SchemaJobState job = SchemaJobState.ABSENT;
        if (schemaKey != null && !schemaKey.equals(annotations.get(SCHEMA_APPLIED_ANNOTATION))) {
            job = jobState(client.batch().v1().jobs().inNamespace(namespace)
                    .withName(SchemaJobs.jobName(name, schemaKey)).get());
        }
        Pattern podName = Pattern.compile(Pattern.quote(name) + "-(\\d+)");
        var selector = sts.getSpec().getSelector() == null ? null : sts.getSpec().getSelector().getMatchLabels();
        List<Pod> pods = selector == null || selector.isEmpty()
                ? client.pods().inNamespace(namespace).list().getItems()
                : client.pods().inNamespace(namespace).withLabels(selector).list().getItems();
        List<PodState> states = new ArrayList<>();
        for (Pod pod : pods) {
            Matcher m = podName.matcher(pod.getMetadata().getName());
            if (m.matches()) {
                states.add(podState(pod, Integer.parseInt(m.group(1)), now));
            }
        }
        int replicas = sts.getSpec().getReplicas() == null ? 1 : sts.getSpec().getReplicas();
        String updateRevision = sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
        return new RolloutState(replicas, updateRevision, schemaKey, annotations.get(SCHEMA_APPLIED_ANNOTATION), job,
                annotations.get(RESTART_ANNOTATION), templateAnnotations.get(RESTART_ANNOTATION), states,
                InFlight.decode(annotations.get(IN_FLIGHT_ANNOTATION)), now, readyTimeout);
    }

    private PodState podState(Pod pod, int ordinal, Instant now) {
        boolean ready = conditionTrue(pod, "Ready");
        Instant created = parse(pod.getMetadata().getCreationTimestamp()).orElse(now);
        // Unready since when: the Ready condition's last transition (a pod Ready for days that just
        // turned unready is not "unready too long"); its creation when the kubelet has not said yet.
        Instant unreadySince = readyCondition(pod).flatMap(c -> parse(c.getLastTransitionTime())).orElse(created);
        PodState.Stuck stuck = PodState.Stuck.NO;
        if (!ready) {
            stuck = stuckReason(pod);
            if (stuck == PodState.Stuck.NO && !now.isBefore(unreadySince.plus(readyTimeout))) {
                stuck = PodState.Stuck.UNREADY_TOO_LONG;
            }
        }
        Map<String, String> labels = annotations(pod.getMetadata().getLabels());
        return new PodState(pod.getMetadata().getName(), ordinal, labels.get(REVISION_LABEL), ready,
                pod.getMetadata().getDeletionTimestamp() != null, stuck, created);
    }

    private static PodState.Stuck stuckReason(Pod pod) {
        if (pod.getStatus() == null) {
            return PodState.Stuck.NO;
        }
        List<ContainerStatus> containers = pod.getStatus().getContainerStatuses() == null ? List.of()
                : pod.getStatus().getContainerStatuses();
        for (ContainerStatus c : containers) {
            String waiting = c.getState() == null || c.getState().getWaiting() == null ? null
                    : c.getState().getWaiting().getReason();
            if ("CrashLoopBackOff".equals(waiting)) {
                return PodState.Stuck.CRASH_LOOP;
            }
            if ("ImagePullBackOff".equals(waiting) || "ErrImagePull".equals(waiting) || "InvalidImageName".equals(waiting)) {
                return PodState.Stuck.IMAGE_PULL;
            }
        }
        List<PodCondition> conditions = pod.getStatus().getConditions() == null ? List.of() : pod.getStatus().getConditions();
        boolean unschedulable = conditions.stream().anyMatch(c -> "PodScheduled".equals(c.getType())
                && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason()));
        return unschedulable ? PodState.Stuck.UNSCHEDULABLE : PodState.Stuck.NO;
    }

    private static SchemaJobState jobState(Job job) {
        if (job == null) {
            return SchemaJobState.ABSENT;
        }
        if (job.getStatus() != null && job.getStatus().getSucceeded() != null && job.getStatus().getSucceeded() > 0) {
            return SchemaJobState.SUCCEEDED;
        }
        List<JobCondition> conditions = job.getStatus() == null || job.getStatus().getConditions() == null ? List.of()
                : job.getStatus().getConditions();
        boolean failed = conditions.stream().anyMatch(c -> "Failed".equals(c.getType()) && "True".equals(c.getStatus()));
        return failed ? SchemaJobState.FAILED : SchemaJobState.RUNNING;
    }

    void apply(StatefulSet sts, RolloutStep step) {
        String namespace = sts.getMetadata().getNamespace();
        String name = sts.getMetadata().getName();
        switch (step) {
            case RolloutStep.RequestRestart restart -> {
                // A new template revision, exactly like `kubectl rollout restart`.
                patch(sts, Map.of("spec", Map.of("template", Map.of("metadata", Map.of("annotations",
                        Map.of(RESTART_ANNOTATION, restart.requestedAt()))))));
                events.normal(sts, "RestartRequested", "restart requested at " + restart.requestedAt()
                        + ": every broker is replaced, one at a time");
            }
            case RolloutStep.RunSchemaJob run -> {
                client.batch().v1().jobs().inNamespace(namespace).resource(SchemaJobs.build(sts, run.schemaKey())).create();
                setState(sts, "schema-job " + SchemaJobs.jobName(name, run.schemaKey()));
                events.normal(sts, "SchemaJobStarted", "applying the schema of " + run.schemaKey()
                        + " before any broker restarts (Job " + SchemaJobs.jobName(name, run.schemaKey()) + ")");
            }
            case RolloutStep.AwaitSchemaJob ignored -> {
                // The Job's own status change triggers the next round.
            }
            case RolloutStep.SchemaJobFailed failed -> {
                if (setState(sts, "blocked-schema " + SchemaJobs.jobName(name, failed.schemaKey()))) {
                    events.warning(sts, "SchemaJobFailed", "the schema Job " + SchemaJobs.jobName(name, failed.schemaKey())
                            + " failed: no broker is restarted, the running ones keep serving. Read its logs; delete the"
                            + " Job to try again");
                }
            }
            case RolloutStep.RecordSchemaApplied applied -> {
                annotate(sts, Map.of(SCHEMA_APPLIED_ANNOTATION, applied.schemaKey()));
                events.normal(sts, "SchemaApplied", "schema of " + applied.schemaKey() + " applied");
            }
            case RolloutStep.DeletePod delete -> {
                // Evict first, then record: a crash in between leaves a pod down without a record, which
                // the planner waits out (never two down); the reverse would wait for a pod never deleted.
                // An eviction (not a DELETE) honours the PodDisruptionBudget: refused (429), nothing is recorded.
                if (!remove(namespace, delete.pod())) {
                    if (setState(sts, "waiting-disruption-budget " + delete.pod())) {
                        events.warning(sts, "EvictionRefused", "evicting " + delete.pod() + " would break the"
                                + " PodDisruptionBudget; the roll waits until the budget allows it");
                        LOG.warn("{}/{}: eviction of pod {} refused by its PodDisruptionBudget", namespace, name, delete.pod());
                    }
                    return;
                }
                InFlight inFlight = new InFlight(delete.pod(), sts.getStatus().getUpdateRevision(), clock.instant());
                annotate(sts, Map.of(IN_FLIGHT_ANNOTATION, inFlight.encode(),
                        STATE_ANNOTATION, "in-progress " + sts.getStatus().getUpdateRevision()));
                events.normal(sts, "PodRestarted", "evicted " + delete.pod() + ": " + delete.reason());
                LOG.info("{}/{}: evicted pod {} ({})", namespace, name, delete.pod(), delete.reason());
            }
            case RolloutStep.AwaitPodReady ignored -> {
                // The pod's readiness change triggers the next round.
            }
            case RolloutStep.Halt halt -> {
                if (setState(sts, "stalled " + halt.pod())) {
                    events.warning(sts, "RolloutStalled", halt.reason() + "; no further broker is restarted until it is"
                            + " Ready or the template changes");
                    LOG.warn("{}/{}: rollout halted: {}", namespace, name, halt.reason());
                }
            }
            case RolloutStep.Wait ignored -> {
                // Nothing is safe to do now.
            }
            case RolloutStep.Complete complete -> {
                String value = "complete " + complete.revision();
                Map<String, String> current = annotations(sts.getMetadata().getAnnotations());
                if (!value.equals(current.get(STATE_ANNOTATION)) || current.containsKey(IN_FLIGHT_ANNOTATION)) {
                    boolean rolled = current.containsKey(IN_FLIGHT_ANNOTATION);
                    Map<String, String> done = new HashMap<>();
                    done.put(STATE_ANNOTATION, value);
                    done.put(IN_FLIGHT_ANNOTATION, null);
                    annotate(sts, done);
                    if (rolled) {
                        events.normal(sts, "RolloutComplete", "every broker runs revision " + complete.revision());
                    }
                }
            }
        }
    }

    /** Evicts (or deletes) one pod; false when its PodDisruptionBudget refused the eviction. */
    private boolean remove(String namespace, String pod) {
        var resource = client.pods().inNamespace(namespace).withName(pod);
        if (evict) {
            // policy/v1 by name: fabric8's evict() without an argument sends the older policy/v1beta1.
            return resource.evict(new EvictionBuilder().withNewMetadata().withName(pod).withNamespace(namespace).endMetadata()
                    .build());
        }
        resource.delete();
        return true;
    }

    /** Returns whether the state annotation changed (for once-only warnings). */
    private boolean setState(StatefulSet sts, String value) {
        if (Objects.equals(value, annotations(sts.getMetadata().getAnnotations()).get(STATE_ANNOTATION))) {
            return false;
        }
        annotate(sts, Map.of(STATE_ANNOTATION, value));
        return true;
    }

    /** Sets (a null value removes) StatefulSet annotations; see {@link #patch}. */
    private void annotate(StatefulSet sts, Map<String, String> annotations) {
        patch(sts, Map.of("metadata", Map.of("annotations", annotations)));
    }

    /**
     * A JSON merge patch without resourceVersion: the StatefulSet controller writes the status all
     * the time, so an optimistic-lock edit conflicts on a real cluster, and a pod deleted but not
     * recorded would be the result. The operator alone writes these annotations.
     */
    private void patch(StatefulSet sts, Map<String, Object> change) {
        client.apps().statefulSets().inNamespace(sts.getMetadata().getNamespace()).withName(sts.getMetadata().getName())
                .patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch(change));
    }

    /** A plain mapper: a null must reach the patch (it removes the key), whatever the client's mapper omits. */
    private static String mergePatch(Map<String, Object> change) {
        try {
            return PATCH_JSON.writeValueAsString(change);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, String> annotations(Map<String, String> map) {
        return map == null ? Map.of() : map;
    }

    private static Optional<PodCondition> readyCondition(Pod pod) {
        return pod.getStatus() == null || pod.getStatus().getConditions() == null ? Optional.empty()
                : pod.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst();
    }

    private static boolean conditionTrue(Pod pod, String type) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static Optional<Instant> parse(String timestamp) {
        try {
            return timestamp == null ? Optional.empty() : Optional.of(Instant.parse(timestamp));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
