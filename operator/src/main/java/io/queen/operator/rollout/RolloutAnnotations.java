package io.queen.operator.rollout;

/**
 * Where a broker roll keeps its state in the cluster: annotations on the StatefulSet (and the
 * restart annotation in its pod template) and the pod label of the revision a pod runs. Read
 * through {@link RolloutObservation}, written by {@link RolloutActions}.
 */
public final class RolloutAnnotations {
    /** Set by a user (any new value, e.g. a timestamp) to restart every broker, one at a time. */
    public static final String RESTART_ANNOTATION = "queen.io/restart-requested-at";
    /** The broker image whose schema was applied. */
    public static final String SCHEMA_APPLIED_ANNOTATION = "queen.io/schema-applied";
    /** The pod deleted last, in the {@link InFlight#encode()} form. */
    public static final String IN_FLIGHT_ANNOTATION = "queen.io/rollout-in-flight";
    /**
     * Human-readable roll state: schema-job, blocked-schema, in-progress, stalled,
     * waiting-disruption-budget, complete.
     */
    public static final String STATE_ANNOTATION = "queen.io/rollout";
    /** The pod label the StatefulSet controller sets to the revision a pod was made from. */
    public static final String REVISION_LABEL = "controller-revision-hash";

    private RolloutAnnotations() {
    }
}
