package io.queen.operator.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * One queue on the broker, declared in Kubernetes. The spec is the desired state, the status what was applied.
 * <p>
 * The rules on the whole object refuse setting or removing {@code queueName} and {@code tenantRef}
 * after creation: a rule on the field itself only runs when the field exists before and after, and
 * one on {@code spec} not at all when the Queue had no spec. Either edit would configure a second
 * queue on the broker and orphan the first. The printer columns are listed in display order
 * (crds/ keeps this order; the generator alone sorts them by path).
 */
@Group(QueenResources.GROUP)
@Version(QueenResources.VERSION)
@ShortNames("qq")
@Categories(QueenResources.CATEGORY)
@ValidationRule(value = "!has(oldSelf.spec) || !has(oldSelf.spec.queueName) || (has(self.spec) && has(self.spec.queueName))",
        message = "spec.queueName cannot be removed once set: create a new Queue resource instead",
        fieldPath = ".spec.queueName")
@ValidationRule(value = "(has(oldSelf.spec) && has(oldSelf.spec.queueName)) || !has(self.spec) || !has(self.spec.queueName)",
        message = "spec.queueName cannot be set after creation (the queue already exists under metadata.name):"
                + " create a new Queue resource instead",
        fieldPath = ".spec.queueName")
@ValidationRule(value = "!has(oldSelf.spec) || !has(oldSelf.spec.tenantRef) || (has(self.spec) && has(self.spec.tenantRef))",
        message = "spec.tenantRef cannot be removed once set: create a new Queue resource instead",
        fieldPath = ".spec.tenantRef")
@ValidationRule(value = "(has(oldSelf.spec) && has(oldSelf.spec.tenantRef)) || !has(self.spec) || !has(self.spec.tenantRef)",
        message = "spec.tenantRef cannot be set after creation (the queue already exists under the default tenant):"
                + " create a new Queue resource instead",
        fieldPath = ".spec.tenantRef")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Reason", jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason")
@AdditionalPrinterColumn(name = "Queue", jsonPath = ".status.queueName")
@AdditionalPrinterColumn(name = "Policy", jsonPath = ".spec.deletionPolicy", priority = 1)
@AdditionalPrinterColumn(name = "Tenant", jsonPath = ".status.tenantId", priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class Queue extends CustomResource<QueueSpec, QueueStatus> implements Namespaced {
}
