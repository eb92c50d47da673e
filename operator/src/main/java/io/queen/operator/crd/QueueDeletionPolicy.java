package io.queen.operator.crd;

/** What deleting a Queue resource does to the queue on the broker. */
public enum QueueDeletionPolicy {
    /** Leave the queue and its messages on the broker (default: a GitOps prune must not lose data). */
    Retain,
    /** Delete the queue and its messages. */
    Delete,
    /** Delete the queue once no message is pending; wait until then. */
    DeleteIfEmpty
}
