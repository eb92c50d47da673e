package io.queen.operator.crd;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The committed CRDs (what the chart installs) refuse what the broker's configure refuses, read
 * from the broker's own procedure, and carry the list, name and column settings kubectl relies on.
 */
class CrdSchemaTest {
    private static final Path ROOT = Path.of(System.getProperty("queen.repo.root", ".."));
    private static final Path CONFIGURE_SQL = ROOT.resolve("sql/procedures/012_configure.sql");
    private static final Pattern INT_OPTION = Pattern.compile("configure_int_option_v1\\(p_options, '(\\w+)', (NULL|-?\\d+)\\)");
    private static final Pattern TEXT_OPTION = Pattern.compile("configure_text_option_v1\\(p_options, '(\\w+)', (NULL|\\d+)\\)");
    private static final double INT_MIN = Integer.MIN_VALUE;
    private static final double INT_MAX = Integer.MAX_VALUE;

    /**
     * Options the procedure reads without a floor ({@code NULL}) and bounds in its own code: what
     * the schema must refuse instead, as {min, max}. A new such option fails the test until added.
     */
    private static final Map<String, double[]> CHECKED_IN_PROCEDURE = Map.of(
            "priority", new double[] {INT_MIN, INT_MAX},             // any 32-bit integer
            "minPopWaitTime", new double[] {0, 60000},               // clamped to 0..60000
            "dedupWindowSeconds", new double[] {0, INT_MAX},         // floored at 0
            "retentionSinkHoldMaxSeconds", new double[] {60, 31536000});

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    @Test
    void everyIntegerOptionHasTheBrokersBounds() throws IOException {
        Map<String, JSONSchemaProps> options = queueSpec().getProperties().get("options").getProperties();
        Map<String, double[]> expected = new LinkedHashMap<>();
        Matcher m = INT_OPTION.matcher(Files.readString(CONFIGURE_SQL));
        while (m.find()) {
            String option = m.group(1);
            if (m.group(2).equals("NULL")) {
                assertTrue(CHECKED_IN_PROCEDURE.containsKey(option), option + " has no floor in the procedure: add its bounds here");
                expected.put(option, CHECKED_IN_PROCEDURE.get(option));
            } else {
                // A floor in the procedure; every integer is a 32-bit one there.
                expected.put(option, new double[] {Integer.parseInt(m.group(2)), INT_MAX});
            }
        }
        assertTrue(expected.size() >= 14, "read too few options from " + CONFIGURE_SQL + ": " + expected.keySet());
        for (Map.Entry<String, double[]> e : expected.entrySet()) {
            JSONSchemaProps option = options.get(e.getKey());
            assertNotNull(option, "the broker's option " + e.getKey() + " is not in the CRD");
            assertEquals("integer", option.getType(), e.getKey());
            assertEquals(e.getValue()[0], option.getMinimum(), e.getKey() + " minimum");
            assertEquals(e.getValue()[1], option.getMaximum(), e.getKey() + " maximum");
        }
        for (Map.Entry<String, JSONSchemaProps> option : options.entrySet()) {
            if ("integer".equals(option.getValue().getType())) {
                assertTrue(expected.containsKey(option.getKey()), option.getKey() + " is not an integer option of the broker");
            }
        }
    }

    @Test
    void stringsAreBoundedLikeTheBrokersColumns() throws IOException {
        JSONSchemaProps spec = queueSpec();
        Matcher m = TEXT_OPTION.matcher(Files.readString(CONFIGURE_SQL));
        int seen = 0;
        while (m.find()) {
            seen++;
            String option = m.group(1);
            if (option.equals("retentionSinkHold")) {
                // Checked by pattern in the procedure, not by length.
                assertEquals("^[A-Za-z0-9._-]{0,64}$", spec.getProperties().get("options").getProperties().get(option).getPattern());
            } else {
                assertEquals(Long.valueOf(m.group(2)), spec.getProperties().get(option).getMaxLength(), option + " maxLength");
            }
        }
        assertEquals(3, seen, "text options read from " + CONFIGURE_SQL);
        // The procedure refuses a queue name longer than 255 characters.
        assertEquals(255L, spec.getProperties().get("queueName").getMaxLength());
    }

    @Test
    void purgeBudgetsAreThirtyTwoBitIntegersOfAtLeastOne() throws IOException {
        Map<String, JSONSchemaProps> purge = spec("tenants").getProperties().get("purge").getProperties();
        for (String budget : List.of("maxQueuesPerStep", "maxRowsPerStep")) {
            assertEquals(1.0, purge.get(budget).getMinimum(), budget);
            assertEquals(INT_MAX, purge.get(budget).getMaximum(), budget);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"queues", "tenants"})
    void conditionsAreAMapListKeyedByType(String plural) throws IOException {
        JSONSchemaProps conditions = version(plural).getSchema().getOpenAPIV3Schema().getProperties().get("status")
                .getProperties().get("conditions");
        assertEquals("map", conditions.getXKubernetesListType());
        assertEquals(List.of("type"), conditions.getXKubernetesListMapKeys());
        assertTrue(conditions.getItems().getSchema().getRequired().contains("type"), "a map key must be required");
    }

    @ParameterizedTest
    @ValueSource(strings = {"queues", "tenants"})
    void inTheQueenCategoryOnlyWithReadyFirstAndAgeLast(String plural) throws IOException {
        CustomResourceDefinition crd = crd(plural);
        assertEquals(List.of("queen"), crd.getSpec().getNames().getCategories());
        List<String> columns = version(plural).getAdditionalPrinterColumns().stream()
                .map(CustomResourceColumnDefinition::getName).toList();
        assertEquals("Ready", columns.get(0), columns.toString());
        assertEquals("Reason", columns.get(1), columns.toString());
        assertEquals("Age", columns.get(columns.size() - 1), columns.toString());
    }

    @Test
    void shortNames() throws IOException {
        assertEquals(List.of("qq"), crd("queues").getSpec().getNames().getShortNames());
        assertEquals(List.of("qtenant"), crd("tenants").getSpec().getNames().getShortNames());
    }

    /**
     * A rule on a field runs only when the field is there before and after, so setting or removing
     * an immutable field needs rules on the whole object (a Queue may have no spec at all).
     */
    @ParameterizedTest
    @ValueSource(strings = {"queues:queueName", "queues:tenantRef", "tenants:tenantId"})
    void immutableFieldsCanBeNeitherSetNorRemovedAfterCreation(String pluralAndField) throws IOException {
        String plural = pluralAndField.split(":")[0];
        String field = pluralAndField.split(":")[1];
        List<String> rules = version(plural).getSchema().getOpenAPIV3Schema().getXKubernetesValidations().stream()
                .filter(r -> (".spec." + field).equals(r.getFieldPath())).map(ValidationRule::getRule).toList();
        String had = "has(oldSelf.spec) && has(oldSelf.spec." + field + ")";
        String has = "has(self.spec) && has(self.spec." + field + ")";
        assertEquals(new TreeSet<>(List.of(
                "!has(oldSelf.spec) || !has(oldSelf.spec." + field + ") || (" + has + ")",
                "(" + had + ") || !has(self.spec) || !has(self.spec." + field + ")")), new TreeSet<>(rules));
        List<String> fieldRules = spec(plural).getProperties().get(field).getXKubernetesValidations().stream()
                .map(ValidationRule::getRule).toList();
        assertTrue(fieldRules.contains("self == oldSelf"), field + " can be changed: " + fieldRules);
    }

    private static JSONSchemaProps queueSpec() throws IOException {
        return spec("queues");
    }

    private static JSONSchemaProps spec(String plural) throws IOException {
        return version(plural).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    }

    private static io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion version(String plural)
            throws IOException {
        List<io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion> versions =
                crd(plural).getSpec().getVersions();
        assertEquals(1, versions.size());
        return versions.get(0);
    }

    private static CustomResourceDefinition crd(String plural) throws IOException {
        Path file = ROOT.resolve("crds").resolve(plural + "." + QueenResources.GROUP + "-v1.yml");
        return SERIALIZATION.unmarshal(Files.readString(file), CustomResourceDefinition.class);
    }
}
