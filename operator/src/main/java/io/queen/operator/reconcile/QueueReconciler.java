package io.queen.operator.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.queen.operator.EventRecorder;
import io.queen.operator.brokerclient.BrokerClient;
import io.queen.operator.brokerclient.BrokerSetupException;
import io.queen.operator.brokerclient.BrokerQueue;
import io.queen.operator.brokerclient.BrokerRejectedException;
import io.queen.operator.brokerclient.BrokerUnavailableException;
import io.queen.operator.brokerclient.ConfigureRequests;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.QueueStatus;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Makes the broker hold each Queue as its spec says, and reports that in status.
 *
 * <p>Every reconcile (a spec change, the pause annotation, a Tenant change, or the periodic resync)
 * reads the queue from the broker, configures it with {@code mode:"replace"} (idempotent, so a resync
 * that finds nothing to change changes nothing), then reads it back and compares. A queue deleted or
 * changed on the broker behind the operator's back is therefore restored by the next resync. Status
 * is written only when it changed. Transient broker errors are thrown for JOSDK's retry with backoff;
 * a 400 is a permanent Ready=False with the broker's message and is not retried until the next
 * resync or spec change. Deletion follows {@code spec.deletionPolicy} (see {@link #cleanup}).
 */
@ControllerConfiguration(name = QueueReconciler.NAME, generationAwareEventProcessing = false,
        triggerReconcilerOnAllEvents = true)
public class QueueReconciler implements Reconciler<Queue> {
    public static final String NAME = "queue";
    public static final String FINALIZER = "queues.queen.io/finalizer";

    private static final Logger LOG = LoggerFactory.getLogger(QueueReconciler.class);
    private static final String TENANT_INDEX = "queue-by-tenant";

    private final BrokerClient broker;
    private final EventRecorder events;
    private final StatusWriter statusWriter;
    private final ReconcileTimings timings;
    private final Clock clock;
    private volatile InformerEventSource<Tenant, Queue> tenants;

    public QueueReconciler(BrokerClient broker, EventRecorder events, StatusWriter statusWriter,
                           ReconcileTimings timings, Clock clock) {
        this.broker = broker;
        this.events = events;
        this.statusWriter = statusWriter;
        this.timings = timings;
        this.clock = clock;
    }

    /** Tenants are watched so that a Queue waiting for its Tenant is reconciled as soon as it appears or changes. */
    @Override
    public List<EventSource<?, Queue>> prepareEventSources(EventSourceContext<Queue> context) {
        context.getPrimaryCache().addIndexer(TENANT_INDEX, queue -> tenantKey(queue).map(List::of).orElse(List.of()));
        var configuration = InformerEventSourceConfiguration.from(Tenant.class, Queue.class)
                .withNamespacesInheritedFromController()
                .withSecondaryToPrimaryMapper(tenant -> context.getPrimaryCache()
                        .byIndex(TENANT_INDEX, tenant.getMetadata().getNamespace() + "/" + tenant.getMetadata().getName())
                        .stream().map(ResourceID::fromResource).collect(Collectors.toSet()))
                .build();
        tenants = new InformerEventSource<>(configuration, context);
        return List.of(tenants);
    }

    @Override
    public UpdateControl<Queue> reconcile(Queue queue, Context<Queue> context) {
        if (context.isPrimaryResourceDeleted()) {
            return UpdateControl.noUpdate();
        }
        if (queue.isMarkedForDeletion()) {
            // Without our finalizer there is nothing to do: Kubernetes deletes the resource by itself.
            return queue.hasFinalizer(FINALIZER) ? Finalizers.afterCleanup(context, FINALIZER, cleanup(queue, context))
                    : UpdateControl.noUpdate();
        }
        if (!ReconcileTriggers.paused(queue)) {
            queue = Finalizers.match(context, queue, FINALIZER, QueueDecisions.deletionNeedsTheBroker(queue));
        }
        return apply(queue);
    }

    private UpdateControl<Queue> apply(Queue queue) {
        QueueStatus status = copy(queue.getStatus());
        Instant now = clock.instant();
        Long generation = queue.getMetadata().getGeneration();
        if (ReconcileTriggers.paused(queue)) {
            Conditions.set(status.getConditions(), Conditions.PAUSED, true, "PausedByAnnotation",
                    "reconciling is paused by the queen.io/paused annotation; the broker is left as it is", generation, now);
            return update(queue, status);
        }
        Conditions.remove(status.getConditions(), Conditions.PAUSED);

        String queueName = QueueDecisions.queueName(queue);
        var choice = QueueDecisions.tenantFor(queue, referencedTenant(queue));
        if (choice instanceof QueueDecisions.TenantUnusable unusable) {
            notReady(queue, status, unusable.reason(), unusable.message(), now);
            // The Tenant informer triggers as soon as the Tenant changes; the recheck is a safety net.
            return update(queue, status).rescheduleAfter(timings.recheck());
        }
        var tenant = (QueueDecisions.UseTenant) choice;
        Optional<String> refused = QueueDecisions.refusedChange(status, queueName, tenant.tenantId());
        if (refused.isPresent()) {
            notReady(queue, status, "ChangeRefused", refused.get(), now);
            return update(queue, status);
        }

        try {
            return configure(queue, status, queueName, tenant, now);
        } catch (BrokerSetupException e) {
            setupRefused(queue, status, e, now);
            // A fixed Secret or setting is picked up at the next look; no fast retry against a refusal.
            return update(queue, status).rescheduleAfter(timings.recheck());
        }
    }

    private UpdateControl<Queue> configure(Queue queue, QueueStatus status, String queueName,
                                           QueueDecisions.UseTenant tenant, Instant now) {
        Long generation = queue.getMetadata().getGeneration();
        ObjectNode request = ConfigureRequests.body(queueName, queue.getSpec());
        String hash = ConfigureRequests.hash(request);
        Optional<BrokerQueue> before = broker.queue(tenant.header(), queueName);
        List<String> driftBefore = before.map(q -> ConfigureRequests.differences(request, q)).orElse(List.of());
        JsonNode resolvedOptions;
        try {
            resolvedOptions = broker.configure(tenant.header(), request);
        } catch (BrokerRejectedException e) {
            markReachable(status, generation, now);
            notReady(queue, status, "ConfigureRejected", e.brokerMessage(), now);
            return update(queue, status);
        }
        markReachable(status, generation, now);
        status.setQueueName(queueName);
        status.setTenantId(tenant.tenantId());

        List<String> mismatches = new ArrayList<>(ConfigureRequests.optionDifferences(request, resolvedOptions));
        Optional<BrokerQueue> after = broker.queue(tenant.header(), queueName);
        if (after.isEmpty()) {
            mismatches.add("the broker accepted the configure but does not list the queue on read-back");
        } else {
            mismatches.addAll(ConfigureRequests.differences(request, after.get()));
        }
        if (!mismatches.isEmpty()) {
            notReady(queue, status, "ReadBackMismatch", "the broker does not hold what was applied: "
                    + String.join("; ", mismatches), now);
            return update(queue, status);
        }

        String previousHash = status.getAppliedHash();
        status.setAppliedHash(hash);
        status.setObservedGeneration(generation);
        Conditions.set(status.getConditions(), Conditions.READY, true, "Configured",
                "queue \"" + queueName + "\" on the broker matches the spec", generation, now);
        QueueDecisions.change(queueName, before, driftBefore, previousHash, hash)
                .ifPresent(change -> events.normal(queue, change.reason(), change.message()));
        return update(queue, status);
    }

    /** Transient failures land here on every attempt: the status says why, once, and the retry goes on. */
    @Override
    public ErrorStatusUpdateControl<Queue> updateErrorStatus(Queue queue, Context<Queue> context, Exception e) {
        QueueStatus status = copy(queue.getStatus());
        Instant now = clock.instant();
        Throwable cause = e;
        while (cause.getCause() != null && !(cause instanceof BrokerUnavailableException)) {
            cause = cause.getCause();
        }
        if (cause instanceof BrokerUnavailableException) {
            Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, false, "BrokerUnavailable", cause.getMessage(),
                    queue.getMetadata().getGeneration(), now);
            notReady(queue, status, "BrokerUnavailable", cause.getMessage(), now);
        } else {
            notReady(queue, status, "ReconcileFailed", String.valueOf(e.getMessage()), now);
        }
        settle(queue, status);
        boolean lastAttempt = context.getRetryInfo().map(r -> r.isLastAttempt()).orElse(true);
        ErrorStatusUpdateControl<Queue> control = status.equals(queue.getStatus())
                ? ErrorStatusUpdateControl.noStatusUpdate() : ErrorStatusUpdateControl.patchStatus(StatusWriter.statusOnly(queue, status, Queue::new));
        // When the retries are spent, the periodic resync tries again.
        return lastAttempt ? control.rescheduleAfter(timings.resync()) : control;
    }

    /**
     * Retain (default) or a paused resource: the queue stays on the broker. Delete: the queue is
     * deleted (a queue already gone counts as deleted). DeleteIfEmpty: the finalizer stays while
     * messages are pending, checked again every recheck interval. An unreachable broker is retried
     * until it has been unreachable for {@code brokerGiveUp}; then it is taken as uninstalled and the
     * resource is let go with a warning.
     */
    DeleteControl cleanup(Queue queue, Context<Queue> context) {
        QueueDecisions.CleanupAction action = QueueDecisions.cleanupAction(queue);
        QueueStatus status = copy(queue.getStatus());
        String queueName = status.getQueueName() != null ? status.getQueueName() : QueueDecisions.queueName(queue);
        switch (action) {
            case LET_GO_PAUSED -> {
                events.normal(queue, "Retained", "queue \"" + queueName + "\" left on the broker: the resource is paused");
                return DeleteControl.defaultDelete();
            }
            case LET_GO_RETAIN -> {
                events.normal(queue, "Retained", "queue \"" + queueName + "\" left on the broker (deletionPolicy Retain)");
                return DeleteControl.defaultDelete();
            }
            default -> {
                // Continues below: both need the broker.
            }
        }
        if (status.getTenantId() == null && status.getAppliedHash() == null) {
            // Never configured, so the operator created nothing to delete.
            return DeleteControl.defaultDelete();
        }
        String tenantHeader = new QueueDecisions.UseTenant(status.getTenantId()).header();
        Instant now = clock.instant();
        try {
            if (action == QueueDecisions.CleanupAction.DELETE_IF_EMPTY) {
                Optional<BrokerQueue> current = broker.queue(tenantHeader, queueName);
                if (current.isPresent() && current.get().pending() > 0) {
                    markReachable(status, queue.getMetadata().getGeneration(), now);
                    boolean firstNotice = notReady(queue, status, "NotEmpty", "deletion waits: " + current.get().pending()
                            + " message(s) pending in queue \"" + queueName + "\" (deletionPolicy DeleteIfEmpty)", now, false);
                    if (firstNotice) {
                        events.normal(queue, "WaitingUntilEmpty", "queue \"" + queueName + "\" still has "
                                + current.get().pending() + " pending message(s); deleting once it is empty");
                    }
                    writeIfChanged(queue, status);
                    return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.recheck().toMillis());
                }
            }
            boolean existed = broker.deleteQueue(tenantHeader, queueName);
            events.normal(queue, "Deleted", existed ? "queue \"" + queueName + "\" deleted on the broker"
                    : "queue \"" + queueName + "\" was already gone from the broker");
            return DeleteControl.defaultDelete();
        } catch (BrokerUnavailableException e) {
            if (Conditions.brokerUnreachableFor(status.getConditions(), now, timings.brokerGiveUp())) {
                events.warning(queue, "FinalizerRemoved", "the broker has been unreachable since "
                        + Conditions.since(status.getConditions(), Conditions.BROKER_REACHABLE).orElse(now)
                        + "; taking it as uninstalled and leaving queue \"" + queueName + "\" unmanaged: " + e.getMessage());
                return DeleteControl.defaultDelete();
            }
            Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, false, "BrokerUnavailable", e.getMessage(),
                    queue.getMetadata().getGeneration(), now);
            notReady(queue, status, "BrokerUnavailable", "deletion waits for the broker: " + e.getMessage(), now);
            writeIfChanged(queue, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.recheck().toMillis());
        } catch (BrokerRejectedException e) {
            // Keeping the finalizer keeps the data safe; switching deletionPolicy to Retain lets it go.
            notReady(queue, status, "DeleteRejected", e.brokerMessage(), now);
            writeIfChanged(queue, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.resync().toMillis());
        } catch (BrokerSetupException e) {
            // Not a broker that is gone: the finalizer stays until the credentials or the trust are fixed (or Retain).
            setupRefused(queue, status, e, now);
            writeIfChanged(queue, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.recheck().toMillis());
        }
    }

    /** Ready=False with the refusal's own reason (credentials or TLS trust); a 401/403 also says that the broker answered. */
    private void setupRefused(Queue queue, QueueStatus status, BrokerSetupException e, Instant now) {
        if (e.brokerAnswered()) {
            markReachable(status, queue.getMetadata().getGeneration(), now);
        }
        notReady(queue, status, e.reason(), e.getMessage(), now);
    }

    private Optional<Tenant> referencedTenant(Queue queue) {
        TenantReference ref = queue.getSpec() == null ? null : queue.getSpec().getTenantRef();
        if (ref == null || tenants == null) {
            return Optional.empty();
        }
        return tenants.get(new ResourceID(ref.getName(), queue.getMetadata().getNamespace()));
    }

    private static Optional<String> tenantKey(Queue queue) {
        TenantReference ref = queue.getSpec() == null ? null : queue.getSpec().getTenantRef();
        return ref == null ? Optional.empty() : Optional.of(queue.getMetadata().getNamespace() + "/" + ref.getName());
    }

    private void notReady(Queue queue, QueueStatus status, String reason, String message, Instant now) {
        notReady(queue, status, reason, message, now, true);
    }

    /** Sets Ready=False; returns whether this is news (a new reason), for which a Warning Event is recorded when asked. */
    private boolean notReady(Queue queue, QueueStatus status, String reason, String message, Instant now, boolean warn) {
        boolean news = Conditions.find(status.getConditions(), Conditions.READY)
                .map(c -> !Conditions.FALSE.equals(c.getStatus()) || !reason.equals(c.getReason())).orElse(true);
        Conditions.set(status.getConditions(), Conditions.READY, false, reason, message,
                queue.getMetadata().getGeneration(), now);
        if (news && warn) {
            events.warning(queue, reason, message);
            LOG.warn("queue {}/{} not ready: {}: {}", queue.getMetadata().getNamespace(), queue.getMetadata().getName(),
                    reason, message);
        }
        return news;
    }

    private static void markReachable(QueueStatus status, Long generation, Instant now) {
        Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, true, "Answered",
                "the broker answered the last call", generation, now);
    }

    private void writeIfChanged(Queue queue, QueueStatus status) {
        settle(queue, status);
        statusWriter.writeIfChanged(queue, status);
    }

    private UpdateControl<Queue> update(Queue queue, QueueStatus status) {
        settle(queue, status);
        return StatusWriter.update(queue, status, Queue::new);
    }

    /** Every status write reports the generation it looked at, with Reconciling/Stalled derived from Ready. */
    private void settle(Queue queue, QueueStatus status) {
        Long generation = queue.getMetadata().getGeneration();
        status.setObservedGeneration(generation);
        Conditions.summarize(status.getConditions(), generation, clock.instant());
    }

    private static QueueStatus copy(QueueStatus status) {
        QueueStatus copy = new QueueStatus();
        if (status != null) {
            copy.setObservedGeneration(status.getObservedGeneration());
            copy.setQueueName(status.getQueueName());
            copy.setTenantId(status.getTenantId());
            copy.setAppliedHash(status.getAppliedHash());
            copy.setConditions(new ArrayList<>(status.getConditions()));
        }
        return copy;
    }
}
