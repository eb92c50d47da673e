package io.queen.operator.rollout;

/** The single next thing to do for a broker StatefulSet. The executor applies it; the planner chooses it. */
public sealed interface RolloutStep {

    /** Copy the restart annotation into the pod template, which makes a new revision and so a roll. */
    record RequestRestart(String requestedAt) implements RolloutStep {
    }

    /** Start the schema Job for this schema key; no pod is touched until it succeeded. */
    record RunSchemaJob(String schemaKey) implements RolloutStep {
    }

    record AwaitSchemaJob(String schemaKey) implements RolloutStep {
    }

    /** The schema Job failed: the roll is blocked, old pods keep serving, a human must look. */
    record SchemaJobFailed(String schemaKey) implements RolloutStep {
    }

    /** The Job succeeded: record it, then pods may roll. */
    record RecordSchemaApplied(String schemaKey) implements RolloutStep {
    }

    /** Delete this pod so that the StatefulSet controller re-creates it at the update revision. */
    record DeletePod(String pod, String reason) implements RolloutStep {
    }

    /** The pod deleted last is not Ready yet, within the timeout. */
    record AwaitPodReady(String pod) implements RolloutStep {
    }

    /** The pod deleted last did not become Ready in time: stop, delete nothing more. */
    record Halt(String pod, String reason) implements RolloutStep {
    }

    /** Nothing can safely be done now (a pod is down, terminating or missing); look again soon. */
    record Wait(String reason) implements RolloutStep {
    }

    /** Every pod runs the update revision. */
    record Complete(String revision) implements RolloutStep {
    }
}
