-- =============================================================================
-- 019_worker_metrics : metrics tables written by each replica's collector.
-- The reader functions, the summary trigger and the partition-counter trigger
-- functions of this file are filled by the management-plane capability
-- (020_log_partition_counters attaches the latter to queen.log_partitions).
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.worker_metrics
-- One row per replica worker per minute bucket: request/message counters, ack
-- outcomes, lag, pool and event-loop health. Feeds the worker-metrics,
-- status and cluster Prometheus families.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.worker_metrics (
    id                    uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    hostname              varchar(255) NOT NULL,
    worker_id             integer      NOT NULL,
    pid                   integer      NOT NULL,
    bucket_time           timestamptz  NOT NULL,
    avg_event_loop_lag_ms integer      DEFAULT 0,
    max_event_loop_lag_ms integer      DEFAULT 0,
    avg_free_slots        integer      DEFAULT 0,
    min_free_slots        integer      DEFAULT 0,
    db_connections        integer      DEFAULT 0,
    avg_job_queue_size    integer      DEFAULT 0,
    max_job_queue_size    integer      DEFAULT 0,
    backoff_size          integer      DEFAULT 0,
    jobs_done             bigint       DEFAULT 0,
    push_request_count    bigint       DEFAULT 0,
    pop_request_count     bigint       DEFAULT 0,
    ack_request_count     bigint       DEFAULT 0,
    transaction_count     bigint       DEFAULT 0,
    push_message_count    bigint       DEFAULT 0,
    pop_message_count     bigint       DEFAULT 0,
    ack_message_count     bigint       DEFAULT 0,
    ack_success_count     bigint       DEFAULT 0,
    ack_failed_count      bigint       DEFAULT 0,
    lag_count             bigint       DEFAULT 0,   -- weight for avg_lag_ms
    avg_lag_ms            bigint       DEFAULT 0,
    max_lag_ms            bigint       DEFAULT 0,
    db_error_count        bigint       DEFAULT 0,
    dlq_count             bigint       DEFAULT 0,
    created_at            timestamptz  DEFAULT now(),
    UNIQUE (hostname, worker_id, pid, bucket_time)
);

CREATE INDEX IF NOT EXISTS idx_worker_metrics_bucket ON queen.worker_metrics (bucket_time DESC);
CREATE INDEX IF NOT EXISTS idx_worker_metrics_worker ON queen.worker_metrics (hostname, worker_id);
CREATE INDEX IF NOT EXISTS idx_worker_metrics_created ON queen.worker_metrics (created_at);

-- -----------------------------------------------------------------------------
-- queen.queue_lag_metrics
-- Per-queue per-minute counters summed across replicas (upsert on
-- (bucket_time, queue_id)): pops and lag, push/ack/transaction counts,
-- partition lifecycle events bumped by the log_partitions triggers, the parked
-- long-poll gauge and conflated positions. Cascades with its queue.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.queue_lag_metrics (
    id                 uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    bucket_time        timestamptz NOT NULL,
    queue_id           uuid        NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    pop_count          bigint      DEFAULT 0,
    avg_lag_ms         bigint      DEFAULT 0,
    max_lag_ms         bigint      DEFAULT 0,
    created_at         timestamptz DEFAULT now(),
    push_request_count bigint      DEFAULT 0,
    push_message_count bigint      DEFAULT 0,
    pop_empty_count    bigint      DEFAULT 0,
    ack_request_count  bigint      DEFAULT 0,
    ack_success_count  bigint      DEFAULT 0,
    ack_failed_count   bigint      DEFAULT 0,
    transaction_count  bigint      DEFAULT 0,
    partitions_created integer     DEFAULT 0,
    partitions_deleted integer     DEFAULT 0,
    partition_count    integer,                 -- snapshot, NULL when not sampled
    parked_count       integer     DEFAULT 0,   -- gauge: minute average, summed over replicas
    lag_count          bigint      DEFAULT 0,
    conflated_count    bigint      DEFAULT 0
);

CREATE INDEX IF NOT EXISTS idx_queue_lag_bucket ON queen.queue_lag_metrics (bucket_time DESC);
CREATE UNIQUE INDEX IF NOT EXISTS qlm_bucket_queue_uk ON queen.queue_lag_metrics (bucket_time, queue_id);
CREATE INDEX IF NOT EXISTS idx_queue_lag_queue ON queen.queue_lag_metrics (queue_id);

-- -----------------------------------------------------------------------------
-- queen.queue_parked_replica
-- Per-replica breakdown of the parked long-poll gauge, to spot load-balancer
-- skew. Keyed by queue NAME plus tenant (not by id), so it does not cascade:
-- the tenant purge sweeps it by tenant_id and metric retention ages it out.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.queue_parked_replica (
    bucket_time  timestamptz  NOT NULL,
    queue_name   varchar(512) NOT NULL,
    hostname     varchar(255) NOT NULL,
    worker_id    integer      NOT NULL,
    parked_count integer      DEFAULT 0,
    tenant_id    uuid         NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    PRIMARY KEY (bucket_time, queue_name, hostname, worker_id, tenant_id)
);

CREATE INDEX IF NOT EXISTS idx_queue_parked_replica_bucket ON queen.queue_parked_replica (bucket_time DESC);
CREATE INDEX IF NOT EXISTS idx_queue_parked_replica_queue ON queen.queue_parked_replica (queue_name);

-- -----------------------------------------------------------------------------
-- queen.worker_metrics_summary
-- Singleton row (id = 1) of all-time running totals, advanced by an insert
-- trigger on worker_metrics; gives O(1) lifetime counters to the overview,
-- status and Prometheus readers.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.worker_metrics_summary (
    id                  integer     PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    total_push_requests bigint      DEFAULT 0,
    total_pop_requests  bigint      DEFAULT 0,
    total_ack_requests  bigint      DEFAULT 0,
    total_transactions  bigint      DEFAULT 0,
    total_push_messages bigint      DEFAULT 0,
    total_pop_messages  bigint      DEFAULT 0,
    total_ack_messages  bigint      DEFAULT 0,
    total_ack_success   bigint      DEFAULT 0,
    total_ack_failed    bigint      DEFAULT 0,
    total_db_errors     bigint      DEFAULT 0,
    total_dlq           bigint      DEFAULT 0,
    last_updated_at     timestamptz DEFAULT now()
);

-- The trigger only ever UPDATEs row 1, so it must exist from the first boot.
INSERT INTO queen.worker_metrics_summary (id) VALUES (1) ON CONFLICT (id) DO NOTHING;
