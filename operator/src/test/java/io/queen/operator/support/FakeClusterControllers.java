package io.queen.operator.support;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Plays the controllers the fabric8 mock API server does not have, one {@link #tick()} at a time:
 * the StatefulSet controller (update revision from the template, missing pods re-created at it),
 * the kubelet (a new pod turns Ready on the tick after it appears, or crash-loops when its image is
 * marked broken) and the Job controller (a Job succeeds, or fails when told to).
 */
public final class FakeClusterControllers {
    private final KubernetesClient client;
    private final String namespace;
    private final String statefulSet;
    private final MutableClock clock;
    private final Set<String> brokenImages = new HashSet<>();
    private final Set<String> seenUnready = new HashSet<>();
    private boolean failJobs;

    public FakeClusterControllers(KubernetesClient client, String namespace, String statefulSet, MutableClock clock) {
        this.client = client;
        this.namespace = namespace;
        this.statefulSet = statefulSet;
        this.clock = clock;
    }

    /** Pods of this image crash-loop instead of becoming Ready. */
    public void breakImage(String image) {
        brokenImages.add(image);
    }

    public void failJobs() {
        failJobs = true;
    }

    public void tick() {
        jobController();
        StatefulSet sts = statefulSetController();
        kubelet(sts);
    }

    /** The revision the StatefulSet controller would compute: a hash of the pod template. */
    public static String revisionOf(StatefulSet sts) {
        try {
            byte[] template = Serialization.asJson(sts.getSpec().getTemplate()).getBytes(StandardCharsets.UTF_8);
            return sts.getMetadata().getName() + "-" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(template), 0, 5);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private StatefulSet statefulSetController() {
        StatefulSet sts = client.apps().statefulSets().inNamespace(namespace).withName(statefulSet).get();
        String revision = revisionOf(sts);
        if (sts.getStatus() == null || !revision.equals(sts.getStatus().getUpdateRevision())
                || !Objects.equals(sts.getMetadata().getGeneration(), sts.getStatus().getObservedGeneration())) {
            StatefulSetStatus status = sts.getStatus() == null ? new StatefulSetStatus() : sts.getStatus();
            status.setUpdateRevision(revision);
            status.setObservedGeneration(sts.getMetadata().getGeneration());
            status.setReplicas(sts.getSpec().getReplicas());
            sts.setStatus(status);
            sts = client.apps().statefulSets().inNamespace(namespace).resource(sts).updateStatus();
        }
        Map<String, Pod> pods = new HashMap<>();
        client.pods().inNamespace(namespace).list().getItems().forEach(p -> pods.put(p.getMetadata().getName(), p));
        for (int ordinal = 0; ordinal < sts.getSpec().getReplicas(); ordinal++) {
            String name = statefulSet + "-" + ordinal;
            if (!pods.containsKey(name)) {
                Map<String, String> labels = new HashMap<>(sts.getSpec().getSelector().getMatchLabels());
                labels.put("controller-revision-hash", revision);
                labels.put("app.kubernetes.io/part-of", "queen");
                Pod pod = new PodBuilder()
                        .withNewMetadata().withName(name).withNamespace(namespace).withLabels(labels)
                            .withCreationTimestamp(clock.instant().toString())
                            .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("StatefulSet")
                                    .withName(statefulSet).withUid(sts.getMetadata().getUid()).withController(true).build())
                        .endMetadata()
                        .withSpec(sts.getSpec().getTemplate().getSpec())
                        .withNewStatus().withPhase("Pending").endStatus()
                        .build();
                client.pods().inNamespace(namespace).resource(pod).create();
            }
        }
        return sts;
    }

    private void kubelet(StatefulSet sts) {
        for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
            boolean ready = pod.getStatus() != null && pod.getStatus().getConditions() != null
                    && pod.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
            String name = pod.getMetadata().getName();
            if (ready) {
                continue;
            }
            // A pod becomes Ready (or starts crash-looping) on the tick after the one it appeared in.
            if (seenUnready.add(name + "/" + pod.getMetadata().getUid())) {
                continue;
            }
            String image = pod.getSpec().getContainers().get(0).getImage();
            if (brokenImages.contains(image)) {
                pod.getStatus().setPhase("Running");
                pod.getStatus().setContainerStatuses(List.of(new ContainerStatusBuilder().withName("broker").withReady(false)
                        .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState().build()));
                pod.getStatus().setConditions(List.of(new PodConditionBuilder().withType("Ready").withStatus("False").build()));
            } else {
                pod.getStatus().setPhase("Running");
                pod.getStatus().setConditions(List.of(new PodConditionBuilder().withType("Ready").withStatus("True").build()));
            }
            client.pods().inNamespace(namespace).resource(pod).updateStatus();
        }
    }

    private void jobController() {
        for (Job job : client.batch().v1().jobs().inNamespace(namespace).list().getItems()) {
            if (job.getStatus() != null && (job.getStatus().getSucceeded() != null || job.getStatus().getConditions() != null
                    && !job.getStatus().getConditions().isEmpty())) {
                continue;
            }
            JobStatus status = new JobStatus();
            if (failJobs) {
                status.setFailed(3);
                status.setConditions(List.of(new JobConditionBuilder().withType("Failed").withStatus("True")
                        .withReason("BackoffLimitExceeded").build()));
            } else {
                status.setSucceeded(1);
            }
            job.setStatus(status);
            client.batch().v1().jobs().inNamespace(namespace).resource(job).updateStatus();
        }
    }
}
