package io.queen.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * Finalizers only on resources whose deletion must do work on the broker (a Queue under
 * {@code Delete}/{@code DeleteIfEmpty}, a Tenant under {@code Purge}). A retained resource carries
 * none, so its namespace can finish deleting even with no operator installed. JOSDK would add a
 * finalizer to every resource of a {@code Cleaner}, so the two reconcilers take every event
 * ({@code triggerReconcilerOnAllEvents}) and manage theirs here: added before the broker is first
 * touched, removed when the policy no longer needs it (also what cleans up resources from
 * operator versions that put one everywhere).
 */
final class Finalizers {
    private Finalizers() {
    }

    /** Adds or removes {@code name} so that its presence equals {@code wanted}; returns the resource as now stored. */
    static <P extends HasMetadata> P match(Context<P> context, P resource, String name, boolean wanted) {
        boolean present = resource.hasFinalizer(name);
        if (wanted && !present) {
            return PrimaryUpdateAndCacheUtils.addFinalizer(context, name);
        }
        if (!wanted && present) {
            return PrimaryUpdateAndCacheUtils.removeFinalizer(context, name);
        }
        return resource;
    }

    /** Applies a cleanup's verdict: remove the finalizer (Kubernetes then deletes the resource), or try again later. */
    static <P extends HasMetadata> UpdateControl<P> afterCleanup(Context<P> context, String name, DeleteControl verdict) {
        if (verdict.isRemoveFinalizer()) {
            PrimaryUpdateAndCacheUtils.removeFinalizer(context, name);
            return UpdateControl.noUpdate();
        }
        UpdateControl<P> control = UpdateControl.noUpdate();
        verdict.getScheduleDelay().ifPresent(control::rescheduleAfter);
        return control;
    }
}
