package io.queen.operator.rollout;

/** The schema Job for the template's schema key. */
public enum SchemaJobState {
    ABSENT,
    RUNNING,
    SUCCEEDED,
    FAILED
}
