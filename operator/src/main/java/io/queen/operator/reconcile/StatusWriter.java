package io.queen.operator.reconcile;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;

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

    public <S, R extends CustomResource<?, S>> void patchStatus(R current, S status) {
        R base = client.getKubernetesSerialization().clone(current);
        base.getMetadata().setResourceVersion(null);
        client.resource(base).editStatus(r -> {
            r.setStatus(status);
            return r;
        });
    }
}
