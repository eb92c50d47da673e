package io.queen.operator.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Version;

/** A broker tenant (the {@code x-queen-tenant} UUID) that Queues in the same namespace can reference. */
@Group(QueenResources.GROUP)
@Version(QueenResources.VERSION)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Tenant", jsonPath = ".status.tenantId")
@AdditionalPrinterColumn(name = "Policy", jsonPath = ".spec.deletionPolicy", priority = 1)
@AdditionalPrinterColumn(name = "Purge", jsonPath = ".status.purge.phase", priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class Tenant extends CustomResource<TenantSpec, TenantStatus> implements Namespaced {
}
