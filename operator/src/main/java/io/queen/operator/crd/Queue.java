package io.queen.operator.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** One queue on the broker, declared in Kubernetes. The spec is the desired state, the status what was applied. */
@Group(QueenResources.GROUP)
@Version(QueenResources.VERSION)
@ShortNames("qq")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Reason", jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason")
@AdditionalPrinterColumn(name = "Queue", jsonPath = ".status.queueName")
@AdditionalPrinterColumn(name = "Policy", jsonPath = ".spec.deletionPolicy", priority = 1)
@AdditionalPrinterColumn(name = "Tenant", jsonPath = ".status.tenantId", priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class Queue extends CustomResource<QueueSpec, QueueStatus> implements Namespaced {
}
