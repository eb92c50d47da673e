package io.queen.broker.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of one ack group (one partition, one group, one lease) as a pure function of the
 * cursor state and the resolved items. The new cursor is the highest completed offset clamped below
 * the lowest negative signal (precedence at one offset: dlq > failed > retry); a retry releases the
 * lease with the budget untouched; a failure charges the budget while it lasts and then
 * dead-letters (or drops, with the DLQ off) the poison offset; a dlq status dead-letters at once
 * (broker/DESIGN.md, Acks, retries and dead letters). Under a conflating lease the one delivered
 * message stands for the whole leased span, so a clean ack of it commits to the batch end.
 */
public final class AckDecision {
    public enum Status { COMPLETED, RETRY, FAILED, DLQ }

    /** One acked item: its normalised status and where its transactionId resolved. */
    public record Item(Status status, Long spanOffset, boolean belowCursor, String error) {
    }

    public record ItemOutcome(AckOutcome outcome, boolean dlq) {
    }

    /** What to write: cursor, lease, budget (1 charge, 0 keep, -1 reset), and a poison offset to dead-letter or drop. */
    public record Plan(long committed, boolean release, int retry, Long poisonOffset, boolean fileDeadLetter,
                       String deadLetterError, List<ItemOutcome> items) {
    }

    private AckDecision() {
    }

    /**
     * @param upperBound     the last ackable offset (the leased batch end for a leased ack, else the partition end)
     * @param batchEnd       the live lease's batch end, or null when no lease is held
     * @param conflatedLease the live lease was taken by a conflating pop: it delivered only its
     *                       batch end, and the cursor belongs there once that is acked, even when a
     *                       repeated transactionId resolved the ack to an earlier offset of the span
     */
    public static Plan decide(long committed, long upperBound, Long batchEnd, boolean conflatedLease, int retryCount,
                              int retryLimit, boolean dlqEnabled, List<Item> items) {
        List<ItemOutcome> out = new ArrayList<>(items.size());
        Long lowestNegative = null;
        Status negativeStatus = null;
        Long highestCompleted = null;
        for (Item it : items) {
            Long off = it.spanOffset();
            if (off == null || off > upperBound) {
                if (off == null && it.belowCursor()) {
                    out.add(it.status() == Status.COMPLETED
                            ? new ItemOutcome(AckOutcome.ALREADY_DONE, false)
                            : new ItemOutcome(AckOutcome.ALREADY_COMMITTED, false));
                } else {
                    out.add(new ItemOutcome(AckOutcome.UNRESOLVABLE, false));
                }
                continue;
            }
            out.add(null); // filled below once the group outcome is known
            if (it.status() == Status.COMPLETED) {
                highestCompleted = highestCompleted == null ? off : Math.max(highestCompleted, off);
            } else if (lowestNegative == null || off < lowestNegative
                    || (off.equals(lowestNegative) && it.status().ordinal() > negativeStatus.ordinal())) {
                lowestNegative = off;
                negativeStatus = it.status();
            }
        }

        long newCommitted = committed;
        if (highestCompleted != null) {
            long clamp = lowestNegative == null ? highestCompleted : Math.min(highestCompleted, lowestNegative - 1);
            if (conflatedLease && batchEnd != null && lowestNegative == null) {
                clamp = Math.max(clamp, batchEnd);
            }
            newCommitted = Math.max(committed, clamp);
        }

        boolean release;
        int retry;
        Long poison = null;
        boolean file = false;
        if (lowestNegative == null) {
            release = batchEnd != null && newCommitted >= batchEnd;
            retry = release ? -1 : 0;
        } else if (negativeStatus == Status.RETRY) {
            release = true;
            retry = 0;
        } else if (negativeStatus == Status.FAILED && retryCount < retryLimit) {
            release = true;
            retry = 1;
        } else {
            // Budget exhausted (or an explicit dlq): the poison offset leaves the partition.
            poison = lowestNegative;
            file = negativeStatus == Status.DLQ || dlqEnabled;
            release = true;
            retry = -1;
        }

        String dlqError = null;
        if (poison != null) {
            for (Item it : items) {
                if (poison.equals(it.spanOffset()) && it.status() != Status.COMPLETED && it.error() != null) {
                    dlqError = it.error();
                    break;
                }
            }
            if (dlqError == null) {
                dlqError = items.stream().filter(i -> i.status() != Status.COMPLETED && i.error() != null)
                        .map(Item::error).findFirst().orElse("Retries exhausted");
            }
        }

        for (int i = 0; i < items.size(); i++) {
            if (out.get(i) == null) {
                Item it = items.get(i);
                boolean dlq = file && poison != null && poison.equals(it.spanOffset()) && it.status() != Status.COMPLETED;
                out.set(i, new ItemOutcome(AckOutcome.APPLIED, dlq));
            }
        }
        return new Plan(newCommitted, release, retry, poison, file, dlqError, out);
    }

    /** The reference's exact, case-sensitive normalisation: unknown words are failures. */
    public static Status normalise(String status) {
        if (status == null) {
            return Status.COMPLETED;
        }
        return switch (status) {
            case "completed", "success", "acked", "ok" -> Status.COMPLETED;
            case "retry" -> Status.RETRY;
            case "dlq" -> Status.DLQ;
            default -> Status.FAILED;
        };
    }
}
