package io.queen.operator.rollout;

import java.time.Instant;
import java.util.Optional;

/**
 * The pod the operator deleted last, for which revision, and when: kept in a StatefulSet
 * annotation so that a restarted operator still knows what it is waiting for and since when.
 */
public record InFlight(String pod, String revision, Instant deletedAt) {

    public String encode() {
        return pod + " " + revision + " " + deletedAt;
    }

    /** Empty when absent or not in the {@link #encode()} form (a hand-edited value is ignored, not trusted). */
    public static Optional<InFlight> decode(String value) {
        if (value == null) {
            return Optional.empty();
        }
        String[] parts = value.trim().split(" ");
        if (parts.length != 3) {
            return Optional.empty();
        }
        try {
            return Optional.of(new InFlight(parts[0], parts[1], Instant.parse(parts[2])));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
