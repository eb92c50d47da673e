package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.kubernetes.api.model.Condition;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** What the operator last applied to the broker, and whether the queue matches its spec. */
@JsonInclude(JsonInclude.Include.NON_NULL)
// conditions: one per type, merged by type when several field managers write them
@SchemaCustomizer(value = MapListCustomizer.class, input = MapListCustomizer.CONDITIONS_BY_TYPE)
public class QueueStatus {
    @JsonPropertyDescription("metadata.generation this status describes.")
    private Long observedGeneration;

    @JsonPropertyDescription("Queue name used on the broker.")
    private String queueName;

    @JsonPropertyDescription("Tenant id the queue lives under on the broker.")
    private String tenantId;

    @JsonPropertyDescription("sha256 of the last configure request the broker accepted.")
    private String appliedHash;

    @JsonPropertyDescription("Ready: the queue exists on the broker as specified. BrokerReachable: the last broker call got an answer. Paused: reconciling is paused.")
    private List<Condition> conditions = new ArrayList<>();

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public String getQueueName() {
        return queueName;
    }

    public void setQueueName(String queueName) {
        this.queueName = queueName;
    }

    public String getTenantId() {
        return tenantId;
    }

    public void setTenantId(String tenantId) {
        this.tenantId = tenantId;
    }

    public String getAppliedHash() {
        return appliedHash;
    }

    public void setAppliedHash(String appliedHash) {
        this.appliedHash = appliedHash;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions == null ? new ArrayList<>() : conditions;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QueueStatus s && Objects.equals(observedGeneration, s.observedGeneration)
                && Objects.equals(queueName, s.queueName) && Objects.equals(tenantId, s.tenantId)
                && Objects.equals(appliedHash, s.appliedHash) && Objects.equals(conditions, s.conditions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(observedGeneration, queueName, tenantId, appliedHash, conditions);
    }
}
