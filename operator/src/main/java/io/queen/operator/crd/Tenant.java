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
 * A broker tenant (the {@code x-queen-tenant} UUID) that Queues in the same namespace can reference.
 * <p>
 * The rules on the whole object refuse setting or removing {@code tenantId} after creation (see
 * {@link Queue} for why they sit here): the tenant's data stays under the id it started with. The
 * printer columns are listed in display order.
 */
@Group(QueenResources.GROUP)
@Version(QueenResources.VERSION)
@ShortNames("qtenant")
@Categories(QueenResources.CATEGORY)
@ValidationRule(value = "!has(oldSelf.spec) || !has(oldSelf.spec.tenantId) || (has(self.spec) && has(self.spec.tenantId))",
        message = "spec.tenantId cannot be removed once set: the tenant's data stays under that id",
        fieldPath = ".spec.tenantId")
@ValidationRule(value = "(has(oldSelf.spec) && has(oldSelf.spec.tenantId)) || !has(self.spec) || !has(self.spec.tenantId)",
        message = "spec.tenantId cannot be set after creation: the tenant already has the name-based id",
        fieldPath = ".spec.tenantId")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Reason", jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason")
@AdditionalPrinterColumn(name = "Tenant", jsonPath = ".status.tenantId")
@AdditionalPrinterColumn(name = "Policy", jsonPath = ".spec.deletionPolicy", priority = 1)
@AdditionalPrinterColumn(name = "Purge", jsonPath = ".status.purge.phase", priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class Tenant extends CustomResource<TenantSpec, TenantStatus> implements Namespaced {
}
