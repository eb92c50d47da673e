package io.queen.operator.crd;

import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.util.ArrayList;
import java.util.List;

/**
 * CRD generator hook, named by {@link SchemaCustomizer} on a class: makes one of the class's list
 * properties a map list ({@code x-kubernetes-list-type: map}) keyed by one field of its items, which
 * the generator has no annotation for. Input {@code "<property>:<key>"}. The key becomes required:
 * the API server refuses a map list whose key may be absent. Only the generator runs this.
 */
public final class MapListCustomizer implements SchemaCustomizer.Customizer {
    /** Input for a status whose {@code conditions} are merged by {@code type}, one condition per type. */
    static final String CONDITIONS_BY_TYPE = "conditions:type";

    @Override
    public JSONSchemaProps apply(JSONSchemaProps schema, String input, KubernetesSerialization serialization) {
        String[] propertyAndKey = input.split(":", 2);
        if (propertyAndKey.length != 2) {
            throw new IllegalArgumentException("expected <property>:<key>, got " + input);
        }
        String property = propertyAndKey[0];
        String key = propertyAndKey[1];
        JSONSchemaProps list = schema.getProperties() == null ? null : schema.getProperties().get(property);
        if (list == null || !"array".equals(list.getType()) || list.getItems() == null || list.getItems().getSchema() == null) {
            throw new IllegalArgumentException(property + " is not a list property of this schema");
        }
        JSONSchemaProps item = list.getItems().getSchema();
        if (item.getProperties() == null || !item.getProperties().containsKey(key)) {
            throw new IllegalArgumentException("the items of " + property + " have no field " + key);
        }
        list.setXKubernetesListType("map");
        list.setXKubernetesListMapKeys(List.of(key));
        List<String> required = new ArrayList<>(item.getRequired() == null ? List.of() : item.getRequired());
        if (!required.contains(key)) {
            required.add(key);
        }
        item.setRequired(required);
        return schema;
    }
}
