package io.queen.operator.rollout;

import java.time.Instant;

/**
 * One broker pod as the planner sees it.
 *
 * @param revision    its {@code controller-revision-hash} label: which template it runs
 * @param terminating it has a deletionTimestamp
 * @param stuck       why it cannot become Ready by itself, or {@link Stuck#NO}
 * @param createdAt   creation time, for "unready for too long"
 */
public record PodState(String name, int ordinal, String revision, boolean ready, boolean terminating, Stuck stuck,
                       Instant createdAt) {

    /** Reasons a pod will not become Ready without being replaced. */
    public enum Stuck {
        NO,
        CRASH_LOOP,
        IMAGE_PULL,
        UNSCHEDULABLE,
        UNREADY_TOO_LONG
    }
}
