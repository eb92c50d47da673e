package io.queen.operator.reconcile;

import io.queen.operator.crd.QueenResources;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TenantIdsTest {

    @Test
    void aTenantWithoutIdGetsAStableNameBasedUuid() {
        var first = TenantIds.resolve(tenant("team-a", "apps", null));
        var again = TenantIds.resolve(tenant("team-a", "apps", null));
        var otherNamespace = TenantIds.resolve(tenant("team-a", "other", null));

        assertEquals(first, again);
        assertNotEquals(first, otherNamespace);
        assertEquals(TenantIds.derived("apps", "team-a"), ((TenantIds.Valid) first).tenantId());
    }

    @Test
    void aDeclaredIdIsUsedLowerCased() {
        var resolved = TenantIds.resolve(tenant("t", "apps", "6B1E0000-0000-4000-8000-00000000ABCD"));

        assertEquals(new TenantIds.Valid("6b1e0000-0000-4000-8000-00000000abcd"), resolved);
    }

    @Test
    void theDefaultTenantIsRefused() {
        var resolved = TenantIds.resolve(tenant("t", "apps", QueenResources.DEFAULT_TENANT_ID));

        assertInstanceOf(TenantIds.Invalid.class, resolved);
        assertTrue(((TenantIds.Invalid) resolved).reason().contains("default tenant"));
    }

    @Test
    void anIdThatIsNoUuidIsRefused() {
        assertInstanceOf(TenantIds.Invalid.class, TenantIds.resolve(tenant("t", "apps", "team-a")));
    }

    private static Tenant tenant(String name, String namespace, String id) {
        Tenant tenant = new Tenant();
        tenant.getMetadata().setName(name);
        tenant.getMetadata().setNamespace(namespace);
        TenantSpec spec = new TenantSpec();
        spec.setTenantId(id);
        tenant.setSpec(spec);
        return tenant;
    }
}
