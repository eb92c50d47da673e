package io.queen.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Standard {@code metav1.Condition} bookkeeping on a status' condition list: one entry per type,
 * {@code lastTransitionTime} moved only when the status value changes, so tools can tell how long
 * a state has lasted (the broker-unreachable give-up relies on it).
 */
public final class Conditions {
    public static final String READY = "Ready";
    public static final String BROKER_REACHABLE = "BrokerReachable";
    public static final String PAUSED = "Paused";
    public static final String PURGING = "Purging";
    /** kstatus' abnormal-true pair: work is under way (Reconciling) or cannot go on without a change (Stalled). */
    public static final String RECONCILING = "Reconciling";
    public static final String STALLED = "Stalled";

    /** Ready=False reasons no retry can fix: only a change of the spec, the Tenant or the broker will. */
    private static final Set<String> STALLED_REASONS = Set.of("ConfigureRejected", "ChangeRefused", "InvalidTenantId",
            "TenantInvalid", "TenantDeleted", "ReadBackMismatch", "DeleteRejected", "PurgeRejected");

    public static final String TRUE = "True";
    public static final String FALSE = "False";

    private Conditions() {
    }

    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    public static boolean isTrue(List<Condition> conditions, String type) {
        return find(conditions, type).map(c -> TRUE.equals(c.getStatus())).orElse(false);
    }

    /** Sets (or replaces) the condition of this type; keeps its transition time when the status value is unchanged. */
    public static void set(List<Condition> conditions, String type, boolean status, String reason, String message,
                           Long observedGeneration, Instant now) {
        String value = status ? TRUE : FALSE;
        Optional<Condition> previous = find(conditions, type);
        String transition = previous.filter(c -> value.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime)
                .orElse(now.truncatedTo(ChronoUnit.SECONDS).toString());
        Condition next = new ConditionBuilder().withType(type).withStatus(value).withReason(reason)
                .withMessage(message).withObservedGeneration(observedGeneration).withLastTransitionTime(transition)
                .build();
        int at = previous.map(conditions::indexOf).orElse(-1);
        if (at >= 0) {
            conditions.set(at, next);
        } else {
            conditions.add(next);
        }
    }

    /**
     * Derives Reconciling and Stalled from Ready, so that kstatus-based waiters (Flux, {@code helm
     * --wait}, {@code kubectl wait}) settle: Ready=True is neither, a permanent refusal is Stalled, any
     * other Ready=False is Reconciling (a retry or a recheck is due).
     */
    public static void summarize(List<Condition> conditions, Long observedGeneration, Instant now) {
        Optional<Condition> ready = find(conditions, READY);
        if (ready.isEmpty()) {
            return;
        }
        boolean isReady = TRUE.equals(ready.get().getStatus());
        boolean stalled = !isReady && STALLED_REASONS.contains(ready.get().getReason());
        String reason = isReady ? "Reconciled" : ready.get().getReason();
        set(conditions, STALLED, stalled, stalled ? reason : "NotStalled",
                stalled ? ready.get().getMessage() : "nothing blocks reconciling", observedGeneration, now);
        set(conditions, RECONCILING, !isReady && !stalled, reason,
                isReady ? "the spec is applied" : stalled ? "waiting for a change of the spec" : ready.get().getMessage(),
                observedGeneration, now);
    }

    public static void remove(List<Condition> conditions, String type) {
        conditions.removeIf(c -> type.equals(c.getType()));
    }

    /** Since when the condition has had its current status value; empty when absent or unparseable. */
    public static Optional<Instant> since(List<Condition> conditions, String type) {
        return find(conditions, type).map(Condition::getLastTransitionTime).flatMap(t -> {
            try {
                return Optional.of(Instant.parse(t));
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        });
    }

    /**
     * The broker has not answered for at least {@code giveUpAfter} (BrokerReachable False since
     * then): finalizers treat it as uninstalled and let go rather than leave a namespace stuck.
     */
    public static boolean brokerUnreachableFor(List<Condition> conditions, Instant now, Duration giveUpAfter) {
        boolean unreachable = find(conditions, BROKER_REACHABLE).map(c -> FALSE.equals(c.getStatus())).orElse(false);
        return unreachable && since(conditions, BROKER_REACHABLE).map(t -> !now.isBefore(t.plus(giveUpAfter))).orElse(false);
    }
}
