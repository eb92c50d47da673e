package io.queen.operator.support;

import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.QueueSpec;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.crd.TenantSpec;

/** Queue and Tenant resources as a user declares them, for tests to create. */
public final class Declared {
    private Declared() {
    }

    /** A Queue with only its deletion policy set (null: the default). */
    public static Queue queue(String namespace, String name, QueueDeletionPolicy policy) {
        Queue queue = new Queue();
        queue.getMetadata().setName(name);
        queue.getMetadata().setNamespace(namespace);
        QueueSpec spec = new QueueSpec();
        if (policy != null) {
            spec.setDeletionPolicy(policy);
        }
        queue.setSpec(spec);
        return queue;
    }

    /** A Tenant with only its deletion policy set (null: the default). */
    public static Tenant tenant(String namespace, String name, TenantDeletionPolicy policy) {
        Tenant tenant = new Tenant();
        tenant.getMetadata().setName(name);
        tenant.getMetadata().setNamespace(namespace);
        TenantSpec spec = new TenantSpec();
        if (policy != null) {
            spec.setDeletionPolicy(policy);
        }
        tenant.setSpec(spec);
        return tenant;
    }
}
