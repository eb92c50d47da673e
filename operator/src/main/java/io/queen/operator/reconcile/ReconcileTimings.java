package io.queen.operator.reconcile;

import java.time.Duration;

/**
 * The waits of the Queue and Tenant reconcilers.
 *
 * @param recheck        how soon to look again at something that may fix itself (a missing Tenant, a non-empty queue)
 * @param purgeStep      pause between two tenant purge steps
 * @param brokerGiveUp   how long a deletion waits for an unreachable broker before letting go with a warning
 * @param resync         periodic reconcile of every resource, the drift-repair period; also after retries ran out
 */
public record ReconcileTimings(Duration recheck, Duration purgeStep, Duration brokerGiveUp, Duration resync) {
    public static ReconcileTimings defaults() {
        return new ReconcileTimings(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofMinutes(10),
                Duration.ofMinutes(5));
    }
}
