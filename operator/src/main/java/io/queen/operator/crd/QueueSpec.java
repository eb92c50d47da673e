package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Desired state of one queue on the broker. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class QueueSpec {
    @JsonPropertyDescription("Queue name on the broker; defaults to metadata.name. Cannot change, be set or be removed after creation.")
    @Size(min = 1, max = 255)
    @ValidationRule(value = "self == oldSelf", message = "queueName is immutable: create a new Queue resource instead")
    private String queueName;

    @JsonPropertyDescription("Tenant resource in this namespace whose id scopes the queue; the broker's default tenant when absent."
            + " Cannot change, be set or be removed after creation.")
    @ValidationRule(value = "self == oldSelf", message = "tenantRef is immutable: create a new Queue resource instead")
    private TenantReference tenantRef;

    @JsonPropertyDescription("Discovery label for pops by namespace (the broker's queue namespace, not the Kubernetes one).")
    @Size(max = 255)
    private String namespace;

    @JsonPropertyDescription("Discovery label for pops by task.")
    @Size(max = 255)
    private String task;

    @JsonPropertyDescription("Broker options; an option left out takes the broker's default.")
    private QueueOptions options;

    @JsonPropertyDescription("What deleting this resource does on the broker: Retain (default) keeps the queue, Delete removes it,"
            + " DeleteIfEmpty removes it once no message is pending.")
    @Default("Retain")
    private QueueDeletionPolicy deletionPolicy = QueueDeletionPolicy.Retain;

    public String getQueueName() {
        return queueName;
    }

    public void setQueueName(String queueName) {
        this.queueName = queueName;
    }

    public TenantReference getTenantRef() {
        return tenantRef;
    }

    public void setTenantRef(TenantReference tenantRef) {
        this.tenantRef = tenantRef;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getTask() {
        return task;
    }

    public void setTask(String task) {
        this.task = task;
    }

    public QueueOptions getOptions() {
        return options;
    }

    public void setOptions(QueueOptions options) {
        this.options = options;
    }

    public QueueDeletionPolicy getDeletionPolicy() {
        return deletionPolicy;
    }

    public void setDeletionPolicy(QueueDeletionPolicy deletionPolicy) {
        this.deletionPolicy = deletionPolicy;
    }
}
