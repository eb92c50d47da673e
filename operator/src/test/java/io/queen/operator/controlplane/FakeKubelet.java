package io.queen.operator.controlplane;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.queen.operator.support.Conflicts;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Plays the one node of a namespace's pods, since nothing here runs containers: binds each new pod
 * to a fake Node (through the {@code binding} subresource, as the scheduler does), reports it
 * Running and Ready, Succeeded or Failed as the test decides, and finishes the graceful deletion
 * of pods the API server marked for deletion (a real kubelet confirms with a zero grace period).
 * Every other controller is the real one in the controller-manager.
 */
public final class FakeKubelet implements AutoCloseable {
    /** What the node does with a pod. */
    public enum Outcome { READY, NOT_READY, SUCCEED, FAIL }

    public static final String NODE = "queen-test-node";

    private final KubernetesClient admin;
    private final String namespace;
    private final ScheduledExecutorService loop;
    private final Map<String, Outcome> reported = new ConcurrentHashMap<>();
    private volatile Function<Pod, Outcome> outcomes = FakeKubelet::byKind;

    public FakeKubelet(KubernetesClient admin, String namespace) {
        this.admin = admin;
        this.namespace = namespace;
        ensureNode(admin);
        loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "fake-kubelet-" + namespace));
        loop.scheduleWithFixedDelay(this::syncSafely, 0, 200, TimeUnit.MILLISECONDS);
    }

    /** Job pods succeed, every other pod becomes Ready. */
    public static Outcome byKind(Pod pod) {
        return isJobPod(pod) ? Outcome.SUCCEED : Outcome.READY;
    }

    public static boolean isJobPod(Pod pod) {
        return pod.getMetadata().getOwnerReferences() != null
                && pod.getMetadata().getOwnerReferences().stream().anyMatch(o -> "Job".equals(o.getKind()));
    }

    /** Decides the outcome of pods from now on (a pod keeps the outcome it was given). */
    public void outcomes(Function<Pod, Outcome> decide) {
        this.outcomes = decide;
    }

    /** Turns a running pod unready now (its containers stop passing their readiness probe). */
    public void markUnready(String pod) {
        Conflicts.retrying(() -> admin.pods().inNamespace(namespace).withName(pod).editStatus(p -> {
            String now = now();
            p.getStatus().getConditions().removeIf(c -> "Ready".equals(c.getType()) || "ContainersReady".equals(c.getType()));
            p.getStatus().getConditions().add(condition("ContainersReady", false, now));
            p.getStatus().getConditions().add(condition("Ready", false, now));
            p.getStatus().getContainerStatuses().forEach(c -> c.setReady(false));
            return p;
        }));
    }

    private static void ensureNode(KubernetesClient admin) {
        if (admin.nodes().withName(NODE).get() != null) {
            return;
        }
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .addToLabels("kubernetes.io/hostname", NODE).endMetadata().build()).create();
        // The controller-manager's node controllers write the new Node too (taints, CIDR).
        Conflicts.retrying(() -> admin.nodes().withName(NODE).editStatus(n -> {
            n.setStatus(new NodeStatusBuilder()
                    .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady")
                    .withLastHeartbeatTime(now()).withLastTransitionTime(now()).endCondition().build());
            return n;
        }));
    }

    private void syncSafely() {
        try {
            sync();
        } catch (KubernetesClientException e) {
            // A conflict or a pod deleted under us: the next round sees the new state.
        } catch (RuntimeException e) {
            System.err.println("[fake-kubelet " + namespace + "] " + e);
        }
    }

    private void sync() {
        for (Pod pod : admin.pods().inNamespace(namespace).list().getItems()) {
            String name = pod.getMetadata().getName();
            String key = name + "/" + pod.getMetadata().getUid();
            if (pod.getMetadata().getDeletionTimestamp() != null) {
                // The containers "stopped": confirm the deletion, as the kubelet does.
                admin.pods().inNamespace(namespace).withName(name).withGracePeriod(0).delete();
                reported.remove(key);
                continue;
            }
            if (pod.getSpec().getNodeName() == null) {
                Binding binding = new BindingBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                        .withNewTarget().withKind("Node").withApiVersion("v1").withName(NODE).endTarget().build();
                admin.bindings().inNamespace(namespace).resource(binding).create();
                continue;
            }
            if (!reported.containsKey(key)) {
                Outcome outcome = outcomes.apply(pod);
                admin.pods().inNamespace(namespace).withName(name).editStatus(p -> {
                    p.setStatus(status(p, outcome));
                    return p;
                });
                reported.put(key, outcome);
            }
        }
    }

    private static PodStatus status(Pod pod, Outcome outcome) {
        String now = now();
        boolean ready = outcome == Outcome.READY;
        String phase = switch (outcome) {
            case READY, NOT_READY -> "Running";
            case SUCCEED -> "Succeeded";
            case FAIL -> "Failed";
        };
        List<ContainerStatus> containers = new ArrayList<>();
        for (var c : pod.getSpec().getContainers()) {
            ContainerStatusBuilder status = new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
                    .withImageID("fake://" + c.getImage()).withReady(ready).withStarted(outcome == Outcome.READY
                            || outcome == Outcome.NOT_READY).withRestartCount(0);
            switch (outcome) {
                case READY, NOT_READY -> status.withNewState().withNewRunning().withStartedAt(now).endRunning().endState();
                case SUCCEED -> status.withNewState().withNewTerminated().withExitCode(0).withReason("Completed")
                        .withStartedAt(now).withFinishedAt(now).endTerminated().endState();
                case FAIL -> status.withNewState().withNewTerminated().withExitCode(1).withReason("Error")
                        .withStartedAt(now).withFinishedAt(now).endTerminated().endState();
            }
            containers.add(status.build());
        }
        List<PodCondition> conditions = List.of(
                condition("PodScheduled", true, now), condition("Initialized", true, now),
                condition("ContainersReady", ready, now), condition("Ready", ready, now));
        PodStatus status = new PodStatus();
        status.setPhase(phase);
        status.setConditions(conditions);
        status.setContainerStatuses(containers);
        status.setHostIP("127.0.0.1");
        status.setPodIP("127.0.0.1");
        status.setStartTime(now);
        return status;
    }

    private static PodCondition condition(String type, boolean value, String now) {
        return new PodConditionBuilder().withType(type).withStatus(value ? "True" : "False").withLastTransitionTime(now).build();
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    @Override
    public void close() {
        loop.shutdownNow();
    }
}
