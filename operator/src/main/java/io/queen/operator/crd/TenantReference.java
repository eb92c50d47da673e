package io.queen.operator.crd;

import io.fabric8.generator.annotation.Required;

/** Names a Tenant resource in the Queue's own namespace. */
public class TenantReference {
    @Required
    private String name;

    public TenantReference() {
    }

    public TenantReference(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }
}
