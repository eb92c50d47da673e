package io.queen.operator.rollout;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything the planner needs about one broker StatefulSet, read by the executor.
 *
 * @param updateRevision     {@code status.updateRevision}: the revision every pod should run
 * @param schemaKey          what the template's schema depends on (the broker image)
 * @param schemaAppliedFor   the schema key the schema was last applied for (annotation), or null
 * @param schemaJob          state of the schema Job for {@code schemaKey}
 * @param restartRequestedAt the restart annotation on the StatefulSet, or null
 * @param restartAppliedAt   the same annotation in the pod template: the last restart already rolled
 * @param inFlight           the pod the operator deleted last
 * @param readyTimeout       how long a replaced pod may take to become Ready before the roll halts
 */
public record RolloutState(int replicas, String updateRevision, String schemaKey, String schemaAppliedFor,
                           SchemaJobState schemaJob, String restartRequestedAt, String restartAppliedAt,
                           List<PodState> pods, Optional<InFlight> inFlight, Instant now, Duration readyTimeout) {
}
