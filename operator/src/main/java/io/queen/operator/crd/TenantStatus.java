package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.kubernetes.api.model.Condition;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** The tenant id in use, and the progress of a purge while the resource is being deleted. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// conditions: one per type, merged by type when several field managers write them
@SchemaCustomizer(value = MapListCustomizer.class, input = MapListCustomizer.CONDITIONS_BY_TYPE)
public class TenantStatus {
    @JsonPropertyDescription("metadata.generation this status describes.")
    private Long observedGeneration;

    @JsonPropertyDescription("Tenant UUID Queues referencing this resource are scoped by.")
    private String tenantId;

    @JsonPropertyDescription("Ready: the tenant id is valid. Purging: a purge is running. BrokerReachable: the last broker call got an answer.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Progress of the purge, once deletion under deletionPolicy Purge started.")
    private PurgeProgress purge;

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public String getTenantId() {
        return tenantId;
    }

    public void setTenantId(String tenantId) {
        this.tenantId = tenantId;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions == null ? new ArrayList<>() : conditions;
    }

    public PurgeProgress getPurge() {
        return purge;
    }

    public void setPurge(PurgeProgress purge) {
        this.purge = purge;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TenantStatus s && Objects.equals(observedGeneration, s.observedGeneration)
                && Objects.equals(tenantId, s.tenantId) && Objects.equals(conditions, s.conditions)
                && Objects.equals(purge, s.purge);
    }

    @Override
    public int hashCode() {
        return Objects.hash(observedGeneration, tenantId, conditions, purge);
    }
}
