package io.queen.operator.reconcile;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

import java.util.function.Supplier;

/**
 * Status writes that happen outside JOSDK's UpdateControl: during cleanup, where a DeleteControl
 * cannot carry a status. Sent as a JSON Patch of the status computed against the resource as the
 * reconciler saw it, without optimistic locking (the operator owns status), the same way JOSDK
 * patches status without server-side apply. A JSON merge patch would be simpler, but the fabric8
 * mock API server appends arrays on merge instead of replacing them. A failure is thrown, never
 * swallowed: a status that silently stays stale would mislead the user.
 */
public class StatusWriter {
    private final KubernetesClient client;

    public StatusWriter(KubernetesClient client) {
        this.client = client;
    }

    /** Patches the status only when it differs from what the resource carries. */
    public <S, R extends CustomResource<?, S>> void writeIfChanged(R current, S status) {
        if (!status.equals(current.getStatus())) {
            patchStatus(current, status);
        }
    }

    /** JOSDK's status patch when the status changed, else no update at all. */
    public static <S, R extends CustomResource<?, S>> UpdateControl<R> update(R current, S status, Supplier<R> blank) {
        return status.equals(current.getStatus()) ? UpdateControl.noUpdate()
                : UpdateControl.patchStatus(statusOnly(current, status, blank));
    }

    /** A fresh object with only identity and status: the status patch then touches nothing else. */
    public static <S, R extends CustomResource<?, S>> R statusOnly(R current, S status, Supplier<R> blank) {
        R fresh = blank.get();
        fresh.getMetadata().setName(current.getMetadata().getName());
        fresh.getMetadata().setNamespace(current.getMetadata().getNamespace());
        fresh.setStatus(status);
        return fresh;
    }

    public <S, R extends CustomResource<?, S>> void patchStatus(R current, S status) {
        R base = client.getKubernetesSerialization().clone(current);
        base.getMetadata().setResourceVersion(null);
        client.resource(base).editStatus(r -> {
            r.setStatus(status);
            return r;
        });
    }
}
