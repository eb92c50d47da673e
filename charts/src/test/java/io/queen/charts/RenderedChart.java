package io.queen.charts;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One {@code helm template} of charts/queen for a value set, parsed document by document into
 * fabric8 models (kinds fabric8 does not know, such as ServiceMonitor, become
 * {@code GenericKubernetesResource}). Renderings are cached: Helm runs once per value set per JVM.
 */
final class RenderedChart {
    static final String RELEASE = "queen";
    static final String NAMESPACE = "queen-system";
    /** The Kubernetes version the chart is rendered for (Capabilities.KubeVersion). */
    static final String KUBE_VERSION = "v1.32.0";

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final Map<ValueSet, RenderedChart> CACHE = new EnumMap<>(ValueSet.class);
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private final ValueSet valueSet;
    private final String manifest;
    private final List<HasMetadata> objects;

    private RenderedChart(ValueSet valueSet, String manifest, List<HasMetadata> objects) {
        this.valueSet = valueSet;
        this.manifest = manifest;
        this.objects = objects;
    }

    static synchronized RenderedChart of(ValueSet valueSet) {
        return CACHE.computeIfAbsent(valueSet, RenderedChart::render);
    }

    private static RenderedChart render(ValueSet valueSet) {
        var template = template();
        valueSet.file().ifPresent(template::withValuesFile);
        String manifest = template.call();
        return new RenderedChart(valueSet, manifest, parse(manifest));
    }

    /** A one-off rendering with the chart's values plus {@code overridesYaml} (not cached). */
    static RenderedChart withValues(String overridesYaml) throws IOException {
        Path values = Files.createTempFile("queen-values-", ".yaml");
        try {
            Files.writeString(values, overridesYaml);
            String manifest = template().withValuesFile(values).call();
            return new RenderedChart(ValueSet.DEFAULTS, manifest, parse(manifest));
        } finally {
            Files.deleteIfExists(values);
        }
    }

    static TemplateCommand template() {
        return new Helm(RepositoryPaths.chart()).template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION);
    }

    static List<HasMetadata> parse(String manifest) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : DOCUMENT_SEPARATOR.split(manifest)) {
            if (document.lines().allMatch(line -> line.isBlank() || line.trim().startsWith("#"))) {
                continue;
            }
            Object parsed = SERIALIZATION.unmarshal(document);
            if (!(parsed instanceof HasMetadata object)) {
                throw new IllegalStateException("rendered document is not a Kubernetes object: " + document);
            }
            objects.add(object);
        }
        return objects;
    }

    ValueSet valueSet() {
        return valueSet;
    }

    String manifest() {
        return manifest;
    }

    List<HasMetadata> objects() {
        return objects;
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    List<HasMetadata> ofKind(String kind) {
        return objects.stream().filter(o -> kind.equals(o.getKind())).toList();
    }

    <T extends HasMetadata> Optional<T> find(Class<T> type, String name) {
        return all(type).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst();
    }

    <T extends HasMetadata> T one(Class<T> type, String name) {
        return find(type, name).orElseThrow(() -> new AssertionError(type.getSimpleName() + " " + name
                + " is not rendered for " + valueSet));
    }

    StatefulSet brokerStatefulSet() {
        return one(StatefulSet.class, RELEASE + "-broker");
    }

    Deployment operatorDeployment() {
        return one(Deployment.class, RELEASE + "-operator");
    }
}
