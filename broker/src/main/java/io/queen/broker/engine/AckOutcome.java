package io.queen.broker.engine;

/**
 * How one acknowledged item ended. The answer's {@code success} and {@code error} follow from it
 * (the texts are the reference broker's, which clients match on), and callers that act on a
 * refusal (the transaction route) test the outcome, never the text.
 */
public enum AckOutcome {
    /** The ack was applied (cursor, lease, retry budget or dead letter). */
    APPLIED(true, null),
    /** A completed ack of a message already below the cursor: nothing to do, and a success. */
    ALREADY_DONE(true, null),
    /** A retry, failure or dlq for a message already below the cursor. */
    ALREADY_COMMITTED(false, "already committed: the cursor moved past this message before this ack"),
    /** The transactionId is not in the partition's ack window (its hash purged, or never pushed). */
    UNRESOLVABLE(false, "unresolvable: transaction not in the ack window (hash purged or never pushed);"
            + " if leased, the message redelivers"),
    /** No cursor for this group on this partition. */
    CONSUMER_NOT_FOUND(false, "consumer not found"),
    /** The partition belongs to another tenant. */
    FOREIGN_PARTITION(false, "partition not owned by tenant"),
    /** The ack names a lease that is not the live one. */
    INVALID_LEASE(false, "invalid or expired lease");

    private final boolean success;
    private final String error;

    AckOutcome(boolean success, String error) {
        this.success = success;
        this.error = error;
    }

    public boolean success() {
        return success;
    }

    /** The answer's error text, null on success. */
    public String error() {
        return error;
    }
}
