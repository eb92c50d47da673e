-- =============================================================================
-- 005_log_ack : owns queen.log_dlq. The ack, lease-renewal, DLQ hand-off and
-- transaction-wire procedures are filled by the message-path capability.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.log_dlq
-- Dead-lettered frames as snapshots (payload decoded by the broker, since
-- blobs are opaque to SQL). (partition_id, "offset") records where the poison
-- frame lived. No FK anywhere: retention never purges this table, queue
-- deletion clears it explicitly, and a partition holding DLQ rows is never
-- reclaimed by cleanup. retry_count snapshots batch_retry_count at filing.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_dlq (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id   uuid        NOT NULL,
    consumer_group text        NOT NULL,
    "offset"       bigint      NOT NULL,
    message_id     uuid,
    transaction_id text,
    payload        jsonb,
    error          text,
    retry_count    integer     DEFAULT 0,
    failed_at      timestamptz NOT NULL DEFAULT now()
);

-- DLQ listings read newest-first per partition.
CREATE INDEX IF NOT EXISTS idx_log_dlq_partition_failed_at
    ON queen.log_dlq (partition_id, failed_at DESC);
