package io.queen.charts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code helm lint --strict} for every value set, and the chart's version. helm-java's lint takes
 * no values, so each value set is linted on a copy of the chart whose values.yaml has the
 * overrides merged in (values.schema.json is checked against exactly what a user would install).
 */
class ChartLintTest {
    private static final YAMLMapper YAML = new YAMLMapper();

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void lintPassesInStrictModeForEveryValueSet(ValueSet valueSet, @TempDir Path workDir) throws IOException {
        Path chart = copyWithValues(valueSet, workDir);
        LintResult lint = new Helm(chart).lint().strict().call();
        assertFalse(lint.isFailed(), valueSet + ": " + lint.getMessages());
    }

    @Test
    void valuesSchemaRefusesAnUnknownKeyAndAMissingOwnerSecret(@TempDir Path workDir) throws IOException {
        Path unknownKey = workDir.resolve("unknown-key.yaml");
        Files.writeString(unknownKey, "broker:\n  replicaCount: 3\n");
        Path noOwner = workDir.resolve("no-owner.yaml");
        Files.writeString(noOwner, "schema:\n  ownerSecret: \"\"\n");
        for (Path values : new Path[] {unknownKey, noOwner}) {
            assertThrows(IllegalStateException.class, () -> RenderedChart.template().withValuesFile(values).call(),
                    values.getFileName() + " should be refused by values.schema.json");
        }
    }

    @Test
    void chartVersionAndAppVersionAreTheVersionInThePom() throws IOException {
        JsonNode chart = YAML.readTree(RepositoryPaths.chart().resolve("Chart.yaml").toFile());
        assertEquals(RepositoryPaths.version(), chart.path("version").asText(), "Chart.yaml version");
        assertEquals(RepositoryPaths.version(), chart.path("appVersion").asText(), "Chart.yaml appVersion");
    }

    @Test
    void everyValueSetRendersOnlyObjectsThatParseAsKubernetesModels() {
        for (ValueSet valueSet : ValueSet.values()) {
            RenderedChart chart = RenderedChart.of(valueSet);
            assertFalse(chart.objects().isEmpty(), valueSet + " rendered nothing");
            chart.objects().forEach(o -> assertTrue(o.getMetadata() != null && o.getMetadata().getName() != null,
                    valueSet + ": an object without a name: " + o));
        }
    }

    /** A copy of the chart whose values.yaml is the chart's own with the value set's overrides merged in. */
    private static Path copyWithValues(ValueSet valueSet, Path workDir) throws IOException {
        Path source = RepositoryPaths.chart();
        Path copy = workDir.resolve("queen");
        try (Stream<Path> files = Files.walk(source)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path target = copy.resolve(source.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target);
                }
            }
        }
        if (valueSet.file().isPresent()) {
            ObjectNode values = (ObjectNode) YAML.readTree(source.resolve("values.yaml").toFile());
            merge(values, (ObjectNode) YAML.readTree(valueSet.file().get().toFile()));
            YAML.writeValue(copy.resolve("values.yaml").toFile(), values);
        }
        return copy;
    }

    /** Helm's merge: maps merge key by key, anything else replaces. */
    private static void merge(ObjectNode into, ObjectNode overrides) {
        for (Iterator<Map.Entry<String, JsonNode>> it = overrides.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode current = into.get(entry.getKey());
            if (current instanceof ObjectNode currentObject && entry.getValue() instanceof ObjectNode overrideObject) {
                merge(currentObject, overrideObject);
            } else {
                into.set(entry.getKey(), entry.getValue());
            }
        }
    }
}
