package io.queen.operator.crd;

/** API group, version and the annotation keys users put on Queen resources. */
public final class QueenResources {
    public static final String GROUP = "queen.io";
    public static final String VERSION = "v1alpha1";
    /** {@code kubectl get queen} lists both kinds; not in {@code all}, which is for workloads. */
    public static final String CATEGORY = "queen";

    /** {@code "true"} stops reconciling the resource, and its deletion then leaves the broker alone (Strimzi's managed=false). */
    public static final String PAUSED_ANNOTATION = GROUP + "/paused";
    /** Any new value triggers a reconcile now instead of at the next resync. */
    public static final String RECONCILE_NOW_ANNOTATION = GROUP + "/reconcile-now";

    /** The broker's default tenant: a Tenant resource may never claim it (its data belongs to everyone untenanted). */
    public static final String DEFAULT_TENANT_ID = "00000000-0000-0000-0000-000000000001";

    private QueenResources() {
    }
}
