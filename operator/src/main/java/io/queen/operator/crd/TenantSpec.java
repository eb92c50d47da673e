package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;

/** Desired state of one tenant. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TenantSpec {
    @JsonPropertyDescription("Tenant UUID sent as x-queen-tenant. Defaults to a name-based UUID of namespace/name, stable across"
            + " re-creation. The broker's default tenant 00000000-0000-0000-0000-000000000001 is refused. Cannot change, be set"
            + " or be removed after creation.")
    @Pattern("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
    @ValidationRule(value = "self == oldSelf", message = "tenantId is immutable")
    @ValidationRule(value = "self.lowerAscii() != '" + QueenResources.DEFAULT_TENANT_ID + "'",
            message = "tenantId must not be the broker's default tenant")
    private String tenantId;

    @JsonPropertyDescription("What deleting this resource does on the broker: Retain (default) keeps the tenant's data,"
            + " Purge deletes all of it, step by step, before the resource goes away.")
    @Default("Retain")
    private TenantDeletionPolicy deletionPolicy = TenantDeletionPolicy.Retain;

    @JsonPropertyDescription("Budgets of one purge step.")
    private PurgeBudget purge;

    public String getTenantId() {
        return tenantId;
    }

    public void setTenantId(String tenantId) {
        this.tenantId = tenantId;
    }

    public TenantDeletionPolicy getDeletionPolicy() {
        return deletionPolicy;
    }

    public void setDeletionPolicy(TenantDeletionPolicy deletionPolicy) {
        this.deletionPolicy = deletionPolicy;
    }

    public PurgeBudget getPurge() {
        return purge;
    }

    public void setPurge(PurgeBudget purge) {
        this.purge = purge;
    }
}
