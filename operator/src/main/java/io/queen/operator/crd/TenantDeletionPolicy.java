package io.queen.operator.crd;

/** What deleting a Tenant resource does to the tenant's data on the broker. */
public enum TenantDeletionPolicy {
    /** Leave every queue and row of the tenant in place (default). */
    Retain,
    /** Delete all of the tenant's data through the broker's purge route, step by step, before letting go. */
    Purge
}
