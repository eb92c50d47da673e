package io.queen.operator.controlplane;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One rendering of charts/queen ({@code helm template} in-process through helm-java) and its
 * installation on the real API server, as {@code helm install} would create it. The operator's
 * Deployment is not created (the operator runs in the test JVM, with that Deployment's environment
 * and as its ServiceAccount); nothing else is left out.
 */
public final class ChartRelease {
    public static final String RELEASE = "queen";
    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private final String namespace;
    private final List<HasMetadata> objects;
    /** The client that installed the release: Secrets are read through it, as the kubelet reads them for a pod. */
    private KubernetesClient installedWith;

    private ChartRelease(String namespace, List<HasMetadata> objects) {
        this.namespace = namespace;
        this.objects = objects;
    }

    /**
     * Renders the chart for release {@value #RELEASE} in {@code namespace}, for the control plane's
     * Kubernetes version, with the chart's values plus {@code valuesYaml}.
     */
    public static ChartRelease render(ControlPlane plane, String namespace, String valuesYaml) throws IOException {
        Path chart = Path.of(System.getProperty("queen.repo.root", "..")).resolve("charts/queen").toAbsolutePath().normalize();
        Path values = Files.createTempFile("queen-values-", ".yaml");
        try {
            Files.writeString(values, valuesYaml);
            String manifest = new Helm(chart).template().withName(RELEASE).withNamespace(namespace)
                    .withKubeVersion(plane.version()).withValuesFile(values).call();
            List<HasMetadata> objects = new ArrayList<>();
            for (String document : DOCUMENT_SEPARATOR.split(manifest)) {
                if (document.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
                    continue;
                }
                objects.add((HasMetadata) SERIALIZATION.unmarshal(document));
            }
            return new ChartRelease(namespace, objects);
        } finally {
            Files.deleteIfExists(values);
        }
    }

    public List<HasMetadata> objects() {
        return objects;
    }

    public <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    public StatefulSet brokerStatefulSet() {
        return all(StatefulSet.class).getFirst();
    }

    public Deployment operatorDeployment() {
        return all(Deployment.class).getFirst();
    }

    /** Creates the CRDs (and waits until they are Established), the namespace, then every other object but the operator's Deployment. */
    public void install(KubernetesClient admin) {
        installedWith = admin;
        if (admin.namespaces().withName(namespace).get() == null) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        }
        for (CustomResourceDefinition crd : all(CustomResourceDefinition.class)) {
            admin.apiextensions().v1().customResourceDefinitions().resource(crd).serverSideApply();
            admin.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
                    .waitUntilCondition(c -> c.getStatus() != null && c.getStatus().getConditions() != null
                            && c.getStatus().getConditions().stream()
                            .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())), 30, TimeUnit.SECONDS);
        }
        for (HasMetadata object : objects) {
            if (object instanceof CustomResourceDefinition || object instanceof Deployment) {
                continue;
            }
            admin.resource(object).serverSideApply();
        }
    }

    /**
     * The operator container's environment as the chart sets it, with {@code overrides} on top
     * (the broker URL of the test's broker, short intervals). A Secret reference is resolved from the
     * installed Secret, as the kubelet resolves it for the pod.
     */
    public Map<String, String> operatorEnvironment(Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>();
        for (EnvVar v : operatorDeployment().getSpec().getTemplate().getSpec().getContainers().getFirst().getEnv()) {
            if (v.getValue() != null) {
                env.put(v.getName(), v.getValue());
            } else if (v.getValueFrom() != null && v.getValueFrom().getFieldRef() != null
                    && "metadata.namespace".equals(v.getValueFrom().getFieldRef().getFieldPath())) {
                env.put(v.getName(), namespace);
            } else if (v.getValueFrom() != null && v.getValueFrom().getSecretKeyRef() != null) {
                env.put(v.getName(), secretValue(v.getValueFrom().getSecretKeyRef().getName(),
                        v.getValueFrom().getSecretKeyRef().getKey()));
            }
        }
        env.putAll(overrides);
        return env;
    }

    /** A key of a Secret in the release namespace, read from the API server the release was installed on. */
    public String secretValue(String secret, String key) {
        if (installedWith == null) {
            throw new IllegalStateException("Secret " + secret + " is read from the cluster: install the release first");
        }
        Secret found = installedWith.secrets().inNamespace(namespace).withName(secret).get();
        if (found == null || found.getData() == null || !found.getData().containsKey(key)) {
            throw new IllegalStateException("Secret " + namespace + "/" + secret + " has no key " + key);
        }
        return new String(Base64.getDecoder().decode(found.getData().get(key)), StandardCharsets.UTF_8);
    }

    /** The ServiceAccount the operator's Deployment runs as. */
    public String operatorServiceAccount() {
        return Optional.ofNullable(operatorDeployment().getSpec().getTemplate().getSpec().getServiceAccountName()).orElse("default");
    }

    public String namespace() {
        return namespace;
    }

    /** Deletes what {@link #install} created but the CRDs and namespace (as {@code helm uninstall} does under crds.keep). */
    public void uninstall(KubernetesClient admin) {
        for (HasMetadata object : objects) {
            if (object instanceof CustomResourceDefinition || object instanceof Deployment) {
                continue;
            }
            admin.resource(object).delete();
        }
    }
}
