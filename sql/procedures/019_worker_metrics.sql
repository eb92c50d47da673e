-- =============================================================================
-- 019_worker_metrics : metrics tables written by each replica's collector, the
-- summary trigger, the partition-lifecycle trigger functions (attached to
-- queen.log_partitions by 020_log_partition_counters) and the metrics
-- retention step of the maintenance cycle. The reader functions of this file
-- are filled by the management-plane capability.
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

-- -----------------------------------------------------------------------------
-- Summary trigger: every INSERT into worker_metrics adds its counters to the
-- singleton row. Statement-level with a transition table, so a multi-row
-- insert costs one UPDATE. Only INSERT counts: a writer that upserts a bucket
-- it already wrote must not count it twice.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.worker_metrics_summary_trigger()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queen.worker_metrics_summary s
       SET total_push_requests = s.total_push_requests + n.push_requests,
           total_pop_requests  = s.total_pop_requests  + n.pop_requests,
           total_ack_requests  = s.total_ack_requests  + n.ack_requests,
           total_transactions  = s.total_transactions  + n.transactions,
           total_push_messages = s.total_push_messages + n.push_messages,
           total_pop_messages  = s.total_pop_messages  + n.pop_messages,
           total_ack_messages  = s.total_ack_messages  + n.ack_messages,
           total_ack_success   = s.total_ack_success   + n.ack_success,
           total_ack_failed    = s.total_ack_failed    + n.ack_failed,
           total_db_errors     = s.total_db_errors     + n.db_errors,
           total_dlq           = s.total_dlq           + n.dlq,
           last_updated_at     = now()
      FROM (SELECT COALESCE(sum(push_request_count), 0) AS push_requests,
                   COALESCE(sum(pop_request_count), 0)  AS pop_requests,
                   COALESCE(sum(ack_request_count), 0)  AS ack_requests,
                   COALESCE(sum(transaction_count), 0)  AS transactions,
                   COALESCE(sum(push_message_count), 0) AS push_messages,
                   COALESCE(sum(pop_message_count), 0)  AS pop_messages,
                   COALESCE(sum(ack_message_count), 0)  AS ack_messages,
                   COALESCE(sum(ack_success_count), 0)  AS ack_success,
                   COALESCE(sum(ack_failed_count), 0)   AS ack_failed,
                   COALESCE(sum(db_error_count), 0)     AS db_errors,
                   COALESCE(sum(dlq_count), 0)          AS dlq,
                   count(*)                             AS inserted
            FROM new_worker_metrics) n
     WHERE s.id = 1 AND n.inserted > 0;
    RETURN NULL;
END;
$$;

-- Attached once, never dropped and re-created at boot (that would take an
-- ACCESS EXCLUSIVE lock at every rolling restart); changing the attachment
-- itself needs a manual DROP TRIGGER.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                   WHERE tgrelid = 'queen.worker_metrics'::regclass
                     AND tgname = 'trg_worker_metrics_summary') THEN
        CREATE TRIGGER trg_worker_metrics_summary
            AFTER INSERT ON queen.worker_metrics
            REFERENCING NEW TABLE AS new_worker_metrics
            FOR EACH STATEMENT EXECUTE FUNCTION queen.worker_metrics_summary_trigger();
    END IF;
END;
$$;

-- -----------------------------------------------------------------------------
-- Partition lifecycle counters: bump partitions_created / partitions_deleted of
-- the queue's current-minute queue_lag_metrics row. Statement-level with a
-- transition table: one upsert per queue touched per statement, and none at
-- all when an INSERT ... ON CONFLICT DO NOTHING inserted nothing.
-- The upsert goes in queue_id order so two statements touching overlapping
-- queue sets lock the metric rows in the same order.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_partitions_created_trigger()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queen.queue_lag_metrics AS m (bucket_time, queue_id, partitions_created)
    SELECT date_trunc('minute', now()), np.queue_id, count(*)
    FROM new_partitions np
    GROUP BY np.queue_id
    ORDER BY np.queue_id
    ON CONFLICT (bucket_time, queue_id) DO UPDATE
       SET partitions_created = COALESCE(m.partitions_created, 0) + EXCLUDED.partitions_created;
    RETURN NULL;
END;
$$;

-- A partition that vanished with its whole queue (the cascade of a queue
-- deletion) is not a lifecycle event, and its metric row would violate the
-- queue foreign key: only partitions whose queue still exists are counted,
-- which is what partition cleanup deletes.
CREATE OR REPLACE FUNCTION queen.log_partitions_deleted_trigger()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queen.queue_lag_metrics AS m (bucket_time, queue_id, partitions_deleted)
    SELECT date_trunc('minute', now()), op.queue_id, count(*)
    FROM old_partitions op
    WHERE EXISTS (SELECT 1 FROM queen.queues q WHERE q.id = op.queue_id)
    GROUP BY op.queue_id
    ORDER BY op.queue_id
    ON CONFLICT (bucket_time, queue_id) DO UPDATE
       SET partitions_deleted = COALESCE(m.partitions_deleted, 0) + EXCLUDED.partitions_deleted;
    RETURN NULL;
END;
$$;

-- -----------------------------------------------------------------------------
-- Metrics retention (METRICS_RETENTION_DAYS), one bounded step of the
-- retention cycle: deletes at most p_max_rows rows older than p_cutoff from
-- each metrics table and from queen.retention_history (no foreign key ages it
-- out otherwise). The caller loops until done.
-- Returns {"workerMetrics","queueLagMetrics","queueParkedReplica",
--          "systemMetrics","retentionHistory": rows deleted, "done": bool}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.metrics_retention_step_v1(p_cutoff timestamptz, p_max_rows integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer := GREATEST(COALESCE(p_max_rows, 1), 1);
    v_worker integer;
    v_lag integer;
    v_parked integer;
    v_system integer;
    v_history integer;
BEGIN
    DELETE FROM queen.worker_metrics w
    WHERE w.id IN (SELECT x.id FROM queen.worker_metrics x WHERE x.bucket_time < p_cutoff LIMIT v_rows);
    GET DIAGNOSTICS v_worker = ROW_COUNT;

    DELETE FROM queen.queue_lag_metrics l
    WHERE l.id IN (SELECT x.id FROM queen.queue_lag_metrics x WHERE x.bucket_time < p_cutoff LIMIT v_rows);
    GET DIAGNOSTICS v_lag = ROW_COUNT;

    DELETE FROM queen.queue_parked_replica r
    WHERE (r.bucket_time, r.queue_name, r.hostname, r.worker_id, r.tenant_id) IN (
        SELECT x.bucket_time, x.queue_name, x.hostname, x.worker_id, x.tenant_id
        FROM queen.queue_parked_replica x WHERE x.bucket_time < p_cutoff LIMIT v_rows);
    GET DIAGNOSTICS v_parked = ROW_COUNT;

    DELETE FROM queen.system_metrics s
    WHERE s.id IN (SELECT x.id FROM queen.system_metrics x WHERE x."timestamp" < p_cutoff LIMIT v_rows);
    GET DIAGNOSTICS v_system = ROW_COUNT;

    DELETE FROM queen.retention_history h
    WHERE h.id IN (SELECT x.id FROM queen.retention_history x WHERE x.executed_at < p_cutoff LIMIT v_rows);
    GET DIAGNOSTICS v_history = ROW_COUNT;

    RETURN jsonb_build_object(
        'workerMetrics', v_worker,
        'queueLagMetrics', v_lag,
        'queueParkedReplica', v_parked,
        'systemMetrics', v_system,
        'retentionHistory', v_history,
        'done', GREATEST(v_worker, v_lag, v_parked, v_system, v_history) < v_rows);
END;
$$;
