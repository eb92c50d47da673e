package io.queen.operator.reconcile;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.queen.operator.EventRecorder;
import io.queen.operator.brokerclient.BrokerClient;
import io.queen.operator.brokerclient.BrokerSetupException;
import io.queen.operator.brokerclient.BrokerRejectedException;
import io.queen.operator.brokerclient.BrokerUnavailableException;
import io.queen.operator.brokerclient.TenantPurgeStep;
import io.queen.operator.crd.PurgeBudget;
import io.queen.operator.crd.PurgeProgress;
import io.queen.operator.crd.Tenant;
import io.queen.operator.crd.TenantDeletionPolicy;
import io.queen.operator.crd.TenantStatus;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;

/**
 * Resolves each Tenant's id (declared, or derived from namespace/name) and, on deletion under
 * {@code deletionPolicy: Purge}, deletes all of the tenant's data through the broker's purge route,
 * one bounded step per cleanup call, until the broker reports {@code done}. Progress is in
 * {@code status.purge}. Queues referencing a Tenant that is being deleted go Ready=False.
 */
@ControllerConfiguration(name = TenantReconciler.NAME, generationAwareEventProcessing = false,
        triggerReconcilerOnAllEvents = true)
public class TenantReconciler implements Reconciler<Tenant> {
    public static final String NAME = "tenant";
    public static final String FINALIZER = "tenants.queen.io/finalizer";

    private final BrokerClient broker;
    private final EventRecorder events;
    private final StatusWriter statusWriter;
    private final ReconcileTimings timings;
    private final Clock clock;

    public TenantReconciler(BrokerClient broker, EventRecorder events, StatusWriter statusWriter,
                            ReconcileTimings timings, Clock clock) {
        this.broker = broker;
        this.events = events;
        this.statusWriter = statusWriter;
        this.timings = timings;
        this.clock = clock;
    }

    @Override
    public UpdateControl<Tenant> reconcile(Tenant tenant, Context<Tenant> context) {
        if (context.isPrimaryResourceDeleted()) {
            return UpdateControl.noUpdate();
        }
        if (tenant.isMarkedForDeletion()) {
            // Without our finalizer there is nothing to do: Kubernetes deletes the resource by itself.
            return tenant.hasFinalizer(FINALIZER) ? Finalizers.afterCleanup(context, FINALIZER, cleanup(tenant, context))
                    : UpdateControl.noUpdate();
        }
        if (!ReconcileTriggers.paused(tenant)) {
            tenant = Finalizers.match(context, tenant, FINALIZER, deletionPolicy(tenant) == TenantDeletionPolicy.Purge);
        }
        return resolve(tenant);
    }

    private UpdateControl<Tenant> resolve(Tenant tenant) {
        TenantStatus status = copy(tenant.getStatus());
        Instant now = clock.instant();
        Long generation = tenant.getMetadata().getGeneration();
        if (ReconcileTriggers.paused(tenant)) {
            Conditions.set(status.getConditions(), Conditions.PAUSED, true, "PausedByAnnotation",
                    "reconciling is paused by the queen.io/paused annotation", generation, now);
            return update(tenant, status);
        }
        Conditions.remove(status.getConditions(), Conditions.PAUSED);
        switch (TenantIds.resolve(tenant)) {
            case TenantIds.Invalid invalid -> notReady(tenant, status, "InvalidTenantId", invalid.reason(), now);
            case TenantIds.Valid valid -> {
                if (status.getTenantId() != null && !status.getTenantId().equals(valid.tenantId())) {
                    notReady(tenant, status, "ChangeRefused", "the tenant id cannot change from " + status.getTenantId()
                            + " to " + valid.tenantId() + ": the data stays under the old id", now);
                } else {
                    boolean first = status.getTenantId() == null;
                    status.setTenantId(valid.tenantId());
                    status.setObservedGeneration(generation);
                    Conditions.set(status.getConditions(), Conditions.READY, true, "Resolved",
                            "queues referencing this Tenant are scoped by tenant " + valid.tenantId(), generation, now);
                    if (first) {
                        events.normal(tenant, "Resolved", "tenant id " + valid.tenantId());
                    }
                }
            }
        }
        return update(tenant, status);
    }

    /**
     * Retain (default) or paused: let go. Purge: one purge step per call, progress written to
     * status, rescheduled after {@code purgeStep} until the broker says done. An unreachable broker
     * is waited for up to {@code brokerGiveUp}, then the Tenant is let go with a warning.
     */
    DeleteControl cleanup(Tenant tenant, Context<Tenant> context) {
        TenantStatus status = copy(tenant.getStatus());
        TenantDeletionPolicy policy = deletionPolicy(tenant);
        if (ReconcileTriggers.paused(tenant) || policy == TenantDeletionPolicy.Retain) {
            events.normal(tenant, "Retained", "tenant data left on the broker"
                    + (ReconcileTriggers.paused(tenant) ? ": the resource is paused" : " (deletionPolicy Retain)"));
            return DeleteControl.defaultDelete();
        }
        if (status.getTenantId() == null) {
            // The id was never valid, so no queue was ever configured under it by this resource.
            return DeleteControl.defaultDelete();
        }
        PurgeBudget budget = tenant.getSpec().getPurge() == null ? new PurgeBudget() : tenant.getSpec().getPurge();
        Instant now = clock.instant();
        Long generation = tenant.getMetadata().getGeneration();
        try {
            boolean firstStep = status.getPurge() == null;
            TenantPurgeStep step = broker.purgeTenantStep(status.getTenantId(), budget.maxQueuesOrDefault(),
                    budget.maxRowsOrDefault());
            status.setPurge(progress(status.getPurge(), step));
            Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, true, "Answered",
                    "the broker answered the last call", generation, now);
            if (step.done()) {
                events.normal(tenant, "Purged", "all data of tenant " + status.getTenantId() + " deleted ("
                        + status.getPurge().getQueuesDeleted() + " queue(s) in " + status.getPurge().getSteps() + " step(s))");
                return DeleteControl.defaultDelete();
            }
            if (firstStep) {
                events.normal(tenant, "Purging", "deleting all data of tenant " + status.getTenantId() + " on the broker");
            }
            Conditions.set(status.getConditions(), Conditions.PURGING, true, "Purging", "phase " + step.phase() + ", "
                    + step.queuesRemaining() + " queue(s) remaining", generation, now);
            writeIfChanged(tenant, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.purgeStep().toMillis());
        } catch (BrokerUnavailableException e) {
            if (Conditions.brokerUnreachableFor(status.getConditions(), now, timings.brokerGiveUp())) {
                events.warning(tenant, "FinalizerRemoved", "the broker has been unreachable since "
                        + Conditions.since(status.getConditions(), Conditions.BROKER_REACHABLE).orElse(now)
                        + "; taking it as uninstalled and leaving tenant " + status.getTenantId()
                        + " unpurged: " + e.getMessage());
                return DeleteControl.defaultDelete();
            }
            Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, false, "BrokerUnavailable", e.getMessage(),
                    generation, now);
            notReady(tenant, status, "BrokerUnavailable", "purge waits for the broker: " + e.getMessage(), now);
            writeIfChanged(tenant, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.recheck().toMillis());
        } catch (BrokerRejectedException e) {
            // Keeping the finalizer keeps the promise of Purge; switching deletionPolicy to Retain lets it go.
            notReady(tenant, status, "PurgeRejected", e.brokerMessage(), now);
            writeIfChanged(tenant, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.resync().toMillis());
        } catch (BrokerSetupException e) {
            // Credentials refused or the broker's certificate not trusted: wait for a fixed Secret or setting.
            if (e.brokerAnswered()) {
                Conditions.set(status.getConditions(), Conditions.BROKER_REACHABLE, true, "Answered",
                        "the broker answered the last call", generation, now);
            }
            notReady(tenant, status, e.reason(), e.getMessage(), now);
            writeIfChanged(tenant, status);
            return DeleteControl.noFinalizerRemoval().rescheduleAfter(timings.recheck().toMillis());
        }
    }

    private static TenantDeletionPolicy deletionPolicy(Tenant tenant) {
        return tenant.getSpec() == null || tenant.getSpec().getDeletionPolicy() == null
                ? TenantDeletionPolicy.Retain : tenant.getSpec().getDeletionPolicy();
    }

    private static PurgeProgress progress(PurgeProgress previous, TenantPurgeStep step) {
        PurgeProgress next = new PurgeProgress();
        next.setPhase(step.phase());
        next.setDone(step.done());
        next.setQueuesDeleted((previous == null || previous.getQueuesDeleted() == null ? 0 : previous.getQueuesDeleted())
                + step.queuesDeleted());
        next.setQueuesRemaining(step.queuesRemaining());
        next.setSteps((previous == null || previous.getSteps() == null ? 0 : previous.getSteps()) + 1);
        return next;
    }

    private void notReady(Tenant tenant, TenantStatus status, String reason, String message, Instant now) {
        boolean news = Conditions.find(status.getConditions(), Conditions.READY)
                .map(c -> !Conditions.FALSE.equals(c.getStatus()) || !reason.equals(c.getReason())).orElse(true);
        Conditions.set(status.getConditions(), Conditions.READY, false, reason, message,
                tenant.getMetadata().getGeneration(), now);
        if (news) {
            events.warning(tenant, reason, message);
        }
    }

    private void writeIfChanged(Tenant tenant, TenantStatus status) {
        settle(tenant, status);
        statusWriter.writeIfChanged(tenant, status);
    }

    private UpdateControl<Tenant> update(Tenant tenant, TenantStatus status) {
        settle(tenant, status);
        return StatusWriter.update(tenant, status, Tenant::new);
    }

    /** Every status write reports the generation it looked at, with Reconciling/Stalled derived from Ready. */
    private void settle(Tenant tenant, TenantStatus status) {
        Long generation = tenant.getMetadata().getGeneration();
        status.setObservedGeneration(generation);
        Conditions.summarize(status.getConditions(), generation, clock.instant());
    }

    private static TenantStatus copy(TenantStatus status) {
        TenantStatus copy = new TenantStatus();
        if (status != null) {
            copy.setObservedGeneration(status.getObservedGeneration());
            copy.setTenantId(status.getTenantId());
            copy.setConditions(new ArrayList<>(status.getConditions()));
            copy.setPurge(status.getPurge());
        }
        return copy;
    }
}
