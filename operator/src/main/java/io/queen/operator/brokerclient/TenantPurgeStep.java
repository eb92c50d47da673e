package io.queen.operator.brokerclient;

/** One bounded step of the broker's tenant purge: what phase it reached and whether anything is left. */
public record TenantPurgeStep(String tenant, boolean done, String phase, long queuesDeleted, long queuesRemaining) {
}
