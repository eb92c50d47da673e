package io.queen.e2e;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** The cluster (Kind or the local node) as the scenarios use it: Queue and Tenant resources, broker pods, helm upgrade. */
final class QueenCluster implements AutoCloseable {
    static final String API_VERSION = "queen.io/v1alpha1";
    /** The annotations the operator writes on the broker StatefulSet (RolloutAnnotations, RolloutActions). */
    static final String ROLLOUT_ANNOTATION = "queen.io/rollout";
    static final String SCHEMA_APPLIED_ANNOTATION = "queen.io/schema-applied";
    static final String RESTART_ANNOTATION = "queen.io/restart-requested-at";

    final E2eSettings settings = E2eSettings.fromSystemProperties();
    final KubernetesClient client = new KubernetesClientBuilder().build();
    final BrokerApi broker = new BrokerApi(settings.brokerUrl());

    MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> queues() {
        return client.genericKubernetesResources(API_VERSION, "Queue");
    }

    MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> tenants() {
        return client.genericKubernetesResources(API_VERSION, "Tenant");
    }

    Resource<GenericKubernetesResource> queue(String name) {
        return queues().inNamespace(settings.namespace()).withName(name);
    }

    Resource<GenericKubernetesResource> tenant(String name) {
        return tenants().inNamespace(settings.namespace()).withName(name);
    }

    GenericKubernetesResource createQueue(String name, Map<String, Object> spec) {
        return queues().inNamespace(settings.namespace()).resource(resource("Queue", name, spec)).create();
    }

    GenericKubernetesResource createTenant(String name, Map<String, Object> spec) {
        return tenants().inNamespace(settings.namespace()).resource(resource("Tenant", name, spec)).create();
    }

    private GenericKubernetesResource resource(String kind, String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder().withApiVersion(API_VERSION).withKind(kind)
                .withNewMetadata().withName(name).withNamespace(settings.namespace()).endMetadata()
                .addToAdditionalProperties("spec", spec)
                .build();
    }

    /** The status of condition {@code type} ("True", "False"), empty when the resource or the condition is missing. */
    static Optional<Map<String, Object>> condition(GenericKubernetesResource resource, String type) {
        if (resource == null) {
            return Optional.empty();
        }
        Object conditions = status(resource).get("conditions");
        if (!(conditions instanceof List<?> list)) {
            return Optional.empty();
        }
        return list.stream().filter(c -> c instanceof Map<?, ?> m && type.equals(m.get("type")))
                .map(c -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> condition = (Map<String, Object>) c;
                    return condition;
                }).findFirst();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> status(GenericKubernetesResource resource) {
        Object status = resource.getAdditionalProperties().get("status");
        return status instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> spec(GenericKubernetesResource resource) {
        return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
    }

    /**
     * Runs an edit of an object the operator also writes (status, rollout annotations) until no write
     * races it: Fabric8's {@code edit} sends the resourceVersion it read, so a race is answered 409,
     * and a user's kubectl would read again and retry too.
     */
    static void retryingConflicts(Runnable edit) {
        for (int attempt = 1; ; attempt++) {
            try {
                edit.run();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 10) {
                    throw e;
                }
            }
        }
    }

    /** Ready=True for the resource's current generation. */
    static boolean readyForItsGeneration(GenericKubernetesResource resource) {
        if (resource == null) {
            return false;
        }
        Object observed = status(resource).get("observedGeneration");
        boolean ready = condition(resource, "Ready").map(c -> "True".equals(c.get("status"))).orElse(false);
        return ready && observed != null && ((Number) observed).longValue() == resource.getMetadata().getGeneration();
    }

    StatefulSet brokerStatefulSet() {
        return client.apps().statefulSets().inNamespace(settings.namespace()).withName(settings.brokerStatefulSet()).get();
    }

    List<Pod> brokerPods() {
        Map<String, String> selector = brokerStatefulSet().getSpec().getSelector().getMatchLabels();
        return client.pods().inNamespace(settings.namespace()).withLabels(selector).list().getItems();
    }

    List<Pod> operatorPods() {
        return client.pods().inNamespace(settings.namespace())
                .withLabel("app.kubernetes.io/instance", settings.release())
                .withLabel("app.kubernetes.io/component", "operator").list().getItems();
    }

    static boolean ready(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /**
     * The roll of the current template is over: the operator recorded it complete for the update
     * revision, and every broker runs that revision and is Ready.
     */
    boolean rolloutComplete() {
        StatefulSet sts = brokerStatefulSet();
        String revision = sts.getStatus() == null ? null : sts.getStatus().getUpdateRevision();
        if (revision == null) {
            return false;
        }
        String state = sts.getMetadata().getAnnotations() == null ? null
                : sts.getMetadata().getAnnotations().get(ROLLOUT_ANNOTATION);
        List<Pod> pods = brokerPods();
        return ("complete " + revision).equals(state) && pods.size() == sts.getSpec().getReplicas()
                && pods.stream().allMatch(p -> ready(p)
                        && revision.equals(p.getMetadata().getLabels().get("controller-revision-hash")));
    }

    /** {@code helm upgrade --reuse-values} of the installed release with extra {@code --set} values. */
    void helmUpgrade(String... sets) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("helm", "upgrade", settings.release(),
                settings.chart().toString(), "--namespace", settings.namespace(), "--reuse-values"));
        for (String set : sets) {
            command.add("--set");
            command.add(set);
        }
        Process helm = new ProcessBuilder(command).inheritIO().start();
        if (!helm.waitFor(Duration.ofMinutes(3).toSeconds(), TimeUnit.SECONDS)) {
            helm.destroyForcibly();
            throw new IllegalStateException("helm upgrade did not finish in 3 minutes");
        }
        if (helm.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + helm.exitValue());
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
