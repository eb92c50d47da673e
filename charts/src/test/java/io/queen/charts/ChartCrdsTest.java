package io.queen.charts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The chart installs exactly the CRDs the operator build generates into crds/. The chart keeps
 * byte-identical copies in files/crds/ (Helm cannot read outside the chart). To refresh them after
 * the operator's CRDs changed:
 * <pre>
 * mvn -B -pl charts -am test -Dtest=ChartCrdsTest -Dsurefire.failIfNoSpecifiedTests=false -Dcrds.update=true
 * </pre>
 */
class ChartCrdsTest {
    private static final Path CHART_CRDS = RepositoryPaths.chart().resolve("files/crds");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Helm's keep, and Argo CD's (which ignores Helm's): no prune on sync, no delete with the Application. */
    private static final Map<String, String> KEEP_ANNOTATIONS = Map.of(
            "helm.sh/resource-policy", "keep",
            "argocd.argoproj.io/sync-options", "Prune=false,Delete=false");

    @Test
    void chartCrdFilesAreIdenticalToTheGeneratedCrds() throws IOException {
        Map<String, String> generated = ymlFiles(RepositoryPaths.crds());
        assertTrue(!generated.isEmpty(), "no CRD in " + RepositoryPaths.crds());
        if (Boolean.getBoolean("crds.update")) {
            Files.createDirectories(CHART_CRDS);
            for (Path stale : ymlPaths(CHART_CRDS)) {
                Files.delete(stale);
            }
            for (Path crd : ymlPaths(RepositoryPaths.crds())) {
                Files.copy(crd, CHART_CRDS.resolve(crd.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        if (!generated.equals(ymlFiles(CHART_CRDS))) {
            fail("charts/queen/files/crds differs from crds/. Refresh with: mvn -B -pl charts -am test"
                    + " -Dtest=ChartCrdsTest -Dsurefire.failIfNoSpecifiedTests=false -Dcrds.update=true");
        }
    }

    @ParameterizedTest
    @EnumSource(value = ValueSet.class, names = "CRDS_SKIPPED", mode = EnumSource.Mode.EXCLUDE)
    void renderedCrdsAreTheGeneratedOnesKeptOnUninstall(ValueSet valueSet) throws IOException {
        List<CustomResourceDefinition> rendered = RenderedChart.of(valueSet).all(CustomResourceDefinition.class);
        Map<String, JsonNode> expected = new TreeMap<>();
        for (Path file : ymlPaths(RepositoryPaths.crds())) {
            CustomResourceDefinition crd = SERIALIZATION.unmarshal(Files.readString(file), CustomResourceDefinition.class);
            expected.put(crd.getMetadata().getName(), JSON.valueToTree(crd));
        }
        Map<String, JsonNode> actual = new TreeMap<>();
        for (CustomResourceDefinition crd : rendered) {
            assertEquals(KEEP_ANNOTATIONS, crd.getMetadata().getAnnotations(),
                    crd.getMetadata().getName() + " would be deleted with the release or the Argo CD Application,"
                            + " and every resource of its kind with it");
            crd.getMetadata().setAnnotations(null);
            actual.put(crd.getMetadata().getName(), JSON.valueToTree(crd));
        }
        assertEquals(expected, actual);
    }

    @Test
    void nothingKeepsTheCrdsWhenKeepIsOff() throws IOException {
        List<CustomResourceDefinition> rendered = RenderedChart.withValues("crds:\n  keep: false\n")
                .all(CustomResourceDefinition.class);
        assertEquals(2, rendered.size());
        for (CustomResourceDefinition crd : rendered) {
            Map<String, String> annotations = crd.getMetadata().getAnnotations();
            assertTrue(annotations == null || annotations.isEmpty(), crd.getMetadata().getName() + ": " + annotations);
        }
    }

    @Test
    void noCrdIsRenderedWhenInstallIsOff() {
        assertEquals(List.of(), RenderedChart.of(ValueSet.CRDS_SKIPPED).all(CustomResourceDefinition.class));
    }

    private static List<Path> ymlPaths(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".yml")).sorted().toList();
        }
    }

    private static Map<String, String> ymlFiles(Path dir) throws IOException {
        Map<String, String> contents = new TreeMap<>();
        for (Path file : ymlPaths(dir)) {
            contents.put(file.getFileName().toString(), Files.readString(file));
        }
        return contents.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue,
                (a, b) -> a, TreeMap::new));
    }
}
