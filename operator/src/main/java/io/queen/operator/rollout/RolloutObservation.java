package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.queen.operator.rollout.RolloutAnnotations.IN_FLIGHT_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.RESTART_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.REVISION_LABEL;
import static io.queen.operator.rollout.RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION;

/**
 * One look at a broker StatefulSet, as {@link RolloutObserver} read it: the StatefulSet, the pods
 * its selector matched, its schema Job, and when. Pure from here on: {@link #state} turns the
 * objects into the {@link RolloutState} the planner decides on, and the static checks say what is
 * worth reading at all.
 *
 * @param pods      the pods the StatefulSet's selector matched, of any name ({@link #state} counts only
 *                  {@code <statefulset>-<ordinal>})
 * @param schemaJob the schema Job of {@link #schemaJobToRead}, or null when absent or not looked up
 * @param now       when the objects were read
 */
public record RolloutObservation(StatefulSet statefulSet, List<Pod> pods, Job schemaJob, Instant now) {

    /**
     * A wait while the StatefulSet controller has not caught up with the template, empty when the
     * StatefulSet can be planned from. Until the controller has observed the current generation,
     * {@code status.updateRevision} is the old one and every pod would look up to date: a roll
     * would be read as complete.
     */
    public static Optional<RolloutStep.Wait> awaitStatefulSetController(StatefulSet sts) {
        Long generation = sts.getMetadata().getGeneration();
        Long observed = sts.getStatus() == null ? null : sts.getStatus().getObservedGeneration();
        if (generation != null && (observed == null || observed < generation)) {
            return Optional.of(new RolloutStep.Wait("the StatefulSet controller has not observed generation " + generation));
        }
        if (updateRevision(sts) == null) {
            return Optional.of(new RolloutStep.Wait("no status.updateRevision yet"));
        }
        return Optional.empty();
    }

    /**
     * The name of the schema Job worth reading: the one for the template's schema key, while the
     * schema is not recorded as applied for it. Empty otherwise (the planner does not ask then).
     */
    public static Optional<String> schemaJobToRead(StatefulSet sts) {
        return SchemaJobs.schemaKey(sts)
                .filter(key -> !key.equals(orEmpty(sts.getMetadata().getAnnotations()).get(SCHEMA_APPLIED_ANNOTATION)))
                .map(key -> SchemaJobs.jobName(sts.getMetadata().getName(), key));
    }

    /** The planner's input. {@code readyTimeout} also decides when an unready pod counts as stuck. */
    public RolloutState state(Duration readyTimeout) {
        String name = statefulSet.getMetadata().getName();
        Map<String, String> annotations = orEmpty(statefulSet.getMetadata().getAnnotations());
        Map<String, String> templateAnnotations = statefulSet.getSpec().getTemplate().getMetadata() == null ? Map.of()
                : orEmpty(statefulSet.getSpec().getTemplate().getMetadata().getAnnotations());
        String schemaKey = SchemaJobs.schemaKey(statefulSet).orElse(null);
        SchemaJobState job = schemaJobToRead(statefulSet).isPresent() ? jobState(schemaJob) : SchemaJobState.ABSENT;
        Pattern podName = Pattern.compile(Pattern.quote(name) + "-(\\d+)");
        List<PodState> states = new ArrayList<>();
        for (Pod pod : pods) {
            Matcher m = podName.matcher(pod.getMetadata().getName());
            if (m.matches()) {
                states.add(podState(pod, Integer.parseInt(m.group(1)), now, readyTimeout));
            }
        }
        int replicas = statefulSet.getSpec().getReplicas() == null ? 1 : statefulSet.getSpec().getReplicas();
        return new RolloutState(replicas, updateRevision(statefulSet), schemaKey, annotations.get(SCHEMA_APPLIED_ANNOTATION),
                job, annotations.get(RESTART_ANNOTATION), templateAnnotations.get(RESTART_ANNOTATION), states,
                InFlight.decode(annotations.get(IN_FLIGHT_ANNOTATION)), now, readyTimeout);
    }

    static PodState podState(Pod pod, int ordinal, Instant now, Duration readyTimeout) {
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
        Map<String, String> labels = orEmpty(pod.getMetadata().getLabels());
        return new PodState(pod.getMetadata().getName(), ordinal, labels.get(REVISION_LABEL), ready,
                pod.getMetadata().getDeletionTimestamp() != null, stuck, created);
    }

    static PodState.Stuck stuckReason(Pod pod) {
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

    static SchemaJobState jobState(Job job) {
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

    private static String updateRevision(StatefulSet sts) {
        return sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
    }

    /** Annotations or labels, empty for none. */
    static Map<String, String> orEmpty(Map<String, String> map) {
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
