package io.queen.operator.reconcile;

import io.queen.operator.brokerclient.BrokerQueue;
import io.queen.operator.crd.QueenResources;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueDeletionPolicy;
import io.queen.operator.crd.QueueStatus;
import io.queen.operator.crd.Tenant;

import java.util.List;
import java.util.Optional;

/** The Queue reconciler's decisions, as pure functions of what it observed. */
public final class QueueDecisions {
    private QueueDecisions() {
    }

    public static String queueName(Queue queue) {
        String declared = queue.getSpec() == null ? null : queue.getSpec().getQueueName();
        return declared == null || declared.isEmpty() ? queue.getMetadata().getName() : declared;
    }

    /** Which tenant a Queue lives under, or why it cannot be configured yet. */
    public sealed interface TenantChoice {
    }

    /** @param tenantId the tenant's UUID; {@link QueenResources#DEFAULT_TENANT_ID} when the Queue names no tenant */
    public record UseTenant(String tenantId) implements TenantChoice {
        /** The {@code x-queen-tenant} value: none for the default tenant, so brokers without tenancy accept it. */
        public String header() {
            return QueenResources.DEFAULT_TENANT_ID.equals(tenantId) ? null : tenantId;
        }
    }

    public record TenantUnusable(String reason, String message) implements TenantChoice {
    }

    public static TenantChoice tenantFor(Queue queue, Optional<Tenant> referenced) {
        var ref = queue.getSpec() == null ? null : queue.getSpec().getTenantRef();
        if (ref == null) {
            return new UseTenant(QueenResources.DEFAULT_TENANT_ID);
        }
        if (referenced.isEmpty()) {
            return new TenantUnusable("TenantNotFound", "Tenant \"" + ref.getName() + "\" does not exist in namespace "
                    + queue.getMetadata().getNamespace());
        }
        Tenant tenant = referenced.get();
        if (tenant.isMarkedForDeletion()) {
            return new TenantUnusable("TenantDeleted", "Tenant \"" + ref.getName() + "\" is being deleted");
        }
        return switch (TenantIds.resolve(tenant)) {
            case TenantIds.Valid valid -> new UseTenant(valid.tenantId());
            case TenantIds.Invalid invalid -> new TenantUnusable("TenantInvalid", "Tenant \"" + ref.getName() + "\": "
                    + invalid.reason());
        };
    }

    /**
     * A change the operator refuses to apply because it would orphan the existing queue: a new
     * name or tenant would configure a second queue and leave the first behind.
     */
    public static Optional<String> refusedChange(QueueStatus status, String queueName, String tenantId) {
        if (status.getQueueName() != null && !status.getQueueName().equals(queueName)) {
            return Optional.of("the queue name cannot change from \"" + status.getQueueName() + "\" to \"" + queueName
                    + "\"; create a new Queue resource instead");
        }
        if (status.getTenantId() != null && !status.getTenantId().equals(tenantId)) {
            return Optional.of("the tenant cannot change from " + status.getTenantId() + " to " + tenantId
                    + "; create a new Queue resource instead");
        }
        return Optional.empty();
    }

    /** What a completed apply changed, worth an Event; empty when the broker already matched (a quiet resync). */
    public record Change(String reason, String message) {
    }

    public static Optional<Change> change(String queueName, Optional<BrokerQueue> before, List<String> driftBefore,
                                          String previousHash, String appliedHash) {
        if (before.isEmpty()) {
            return Optional.of(previousHash == null
                    ? new Change("Created", "queue \"" + queueName + "\" created on the broker")
                    : new Change("DriftRepaired", "queue \"" + queueName + "\" was missing on the broker; re-created"));
        }
        if (!appliedHash.equals(previousHash)) {
            return Optional.of(new Change("Configured", "queue \"" + queueName + "\" configured on the broker"));
        }
        if (!driftBefore.isEmpty()) {
            return Optional.of(new Change("DriftRepaired", "queue \"" + queueName + "\" had been changed on the broker ("
                    + String.join("; ", driftBefore) + "); restored"));
        }
        return Optional.empty();
    }

    /** What deleting the resource does on the broker. */
    public enum CleanupAction {
        /** Paused resources are not the operator's to delete. */
        LET_GO_PAUSED,
        LET_GO_RETAIN,
        DELETE,
        DELETE_IF_EMPTY
    }

    /** Whether deleting the resource must call the broker, and so needs a finalizer. */
    public static boolean deletionNeedsTheBroker(Queue queue) {
        return deletionPolicy(queue) != QueueDeletionPolicy.Retain;
    }

    public static CleanupAction cleanupAction(Queue queue) {
        if (ReconcileTriggers.paused(queue)) {
            return CleanupAction.LET_GO_PAUSED;
        }
        return switch (deletionPolicy(queue)) {
            case Retain -> CleanupAction.LET_GO_RETAIN;
            case Delete -> CleanupAction.DELETE;
            case DeleteIfEmpty -> CleanupAction.DELETE_IF_EMPTY;
        };
    }

    private static QueueDeletionPolicy deletionPolicy(Queue queue) {
        return queue.getSpec() == null || queue.getSpec().getDeletionPolicy() == null
                ? QueueDeletionPolicy.Retain : queue.getSpec().getDeletionPolicy();
    }
}
