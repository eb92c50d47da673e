package io.queen.operator.rollout;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.queen.operator.EventRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import static io.queen.operator.rollout.RolloutAnnotations.IN_FLIGHT_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.RESTART_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.SCHEMA_APPLIED_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.STATE_ANNOTATION;

/**
 * The writes of a broker roll: applies the one {@link RolloutStep} the planner chose. They are,
 * and only: StatefulSet annotations (and the template annotation of a requested restart), one Job
 * create, one pod eviction (or delete), Events. Warnings that would repeat every round are recorded
 * once, when the state annotation changes. Reads are {@link RolloutObserver}'s.
 */
public class RolloutActions {
    private static final Logger LOG = LoggerFactory.getLogger(RolloutActions.class);
    private static final ObjectMapper PATCH_JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final EventRecorder events;
    private final Clock clock;
    private final boolean evict;

    /** @param evict replace pods through the eviction API (production); false deletes them (the mock API server has no eviction) */
    public RolloutActions(KubernetesClient client, EventRecorder events, Clock clock, boolean evict) {
        this.client = client;
        this.events = events;
        this.clock = clock;
        this.evict = evict;
    }

    /** Applies one step to the StatefulSet as observed this round (its annotations say what is already recorded). */
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
                Map<String, String> current = RolloutObservation.orEmpty(sts.getMetadata().getAnnotations());
                completion(current, complete.revision()).ifPresent(done -> {
                    annotate(sts, done);
                    if (current.containsKey(IN_FLIGHT_ANNOTATION)) {
                        // A pod was replaced since the last complete: this was a roll, not a quiet round.
                        events.normal(sts, "RolloutComplete", "every broker runs revision " + complete.revision());
                    }
                });
            }
        }
    }

    /**
     * The annotations that record a complete roll (the state, and the in-flight record removed: a
     * null value removes a key), or empty when they are already so. Pure.
     */
    static Optional<Map<String, String>> completion(Map<String, String> annotations, String revision) {
        String value = "complete " + revision;
        if (value.equals(annotations.get(STATE_ANNOTATION)) && !annotations.containsKey(IN_FLIGHT_ANNOTATION)) {
            return Optional.empty();
        }
        Map<String, String> done = new HashMap<>();
        done.put(STATE_ANNOTATION, value);
        done.put(IN_FLIGHT_ANNOTATION, null);
        return Optional.of(done);
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
        if (Objects.equals(value, RolloutObservation.orEmpty(sts.getMetadata().getAnnotations()).get(STATE_ANNOTATION))) {
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
}
