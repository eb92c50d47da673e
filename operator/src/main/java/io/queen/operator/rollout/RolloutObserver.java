package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The reads of a broker roll, and nothing else: the StatefulSet, the pods its selector matches and
 * its schema Job, taken together into a {@link RolloutObservation}. Writes are {@link RolloutActions}'.
 */
public class RolloutObserver {
    private final KubernetesClient client;
    private final Clock clock;

    public RolloutObserver(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    /** Empty when the StatefulSet is gone. */
    Optional<StatefulSet> statefulSet(String namespace, String name) {
        return Optional.ofNullable(client.apps().statefulSets().inNamespace(namespace).withName(name).get());
    }

    /** Its pods and, while its schema is not applied, its schema Job (see {@link RolloutObservation#schemaJobToRead}). */
    RolloutObservation observe(StatefulSet sts) {
        Instant now = clock.instant();
        String namespace = sts.getMetadata().getNamespace();
        Job job = RolloutObservation.schemaJobToRead(sts)
                .map(name -> client.batch().v1().jobs().inNamespace(namespace).withName(name).get())
                .orElse(null);
        var selector = sts.getSpec().getSelector() == null ? null : sts.getSpec().getSelector().getMatchLabels();
        List<Pod> pods = selector == null || selector.isEmpty()
                ? client.pods().inNamespace(namespace).list().getItems()
                : client.pods().inNamespace(namespace).withLabels(selector).list().getItems();
        return new RolloutObservation(sts, pods, job, now);
    }
}
