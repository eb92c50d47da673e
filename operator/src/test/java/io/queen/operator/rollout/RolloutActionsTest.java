package io.queen.operator.rollout;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static io.queen.operator.rollout.RolloutAnnotations.IN_FLIGHT_ANNOTATION;
import static io.queen.operator.rollout.RolloutAnnotations.STATE_ANNOTATION;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** What recording a complete roll writes, decided from the annotations alone (the writes are RolloutExecutorTest's). */
class RolloutActionsTest {

    @Test
    void aFinishedRollRecordsCompleteAndDropsTheInFlightRecord() {
        Map<String, String> expected = new HashMap<>();
        expected.put(STATE_ANNOTATION, "complete rev-2");
        expected.put(IN_FLIGHT_ANNOTATION, null);

        assertEquals(Optional.of(expected), RolloutActions.completion(
                Map.of(STATE_ANNOTATION, "in-progress rev-2", IN_FLIGHT_ANNOTATION, "broker-0 rev-2 2026-01-01T00:00:00Z"), "rev-2"));
        assertEquals(Optional.of(expected), RolloutActions.completion(
                Map.of(STATE_ANNOTATION, "complete rev-2", IN_FLIGHT_ANNOTATION, "broker-0 rev-2 2026-01-01T00:00:00Z"), "rev-2"));
    }

    @Test
    void aFirstLookOrANewRevisionWithNothingToReplaceRecordsComplete() {
        assertEquals(Optional.of("complete rev-1"), RolloutActions.completion(Map.of(), "rev-1").map(m -> m.get(STATE_ANNOTATION)));
        assertEquals(Optional.of("complete rev-2"), RolloutActions.completion(Map.of(STATE_ANNOTATION, "complete rev-1"), "rev-2")
                .map(m -> m.get(STATE_ANNOTATION)));
    }

    @Test
    void anAlreadyRecordedCompleteWritesNothing() {
        assertEquals(Optional.empty(), RolloutActions.completion(Map.of(STATE_ANNOTATION, "complete rev-2"), "rev-2"));
    }
}
