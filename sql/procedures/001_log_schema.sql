-- =============================================================================
-- 001_log_schema : tables of the log storage engine
--
-- A partition is a dense, per-partition BIGINT offset space. Pushes append
-- segments (zstd blobs of frames) covering disjoint inclusive ranges
-- [base_offset, end_offset], allocated under the log_partitions row lock, so
-- created_at is monotone in offset order within a partition. Consumption state
-- is one cursor row per (partition, consumer group).
-- queen.log_dlq lives in 005_log_ack. The one helper, log_unnest_hashes, ends
-- this file.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.log_partitions
-- One row per partition and the per-partition write serializer: the push
-- allocator bumps last_offset under this row's lock. log_start / txns_start are
-- the retention and hash-sidecar purge watermarks; oldest_live_at /
-- oldest_txn_at are the created_at of the rows sitting at those watermarks
-- (NULL = nothing live) so the retention work list is a range scan.
-- last_write_at is quantized to one real change per second by the push path.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_partitions (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    queue_id       uuid        NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name           text        NOT NULL DEFAULT 'Default',
    last_offset    bigint      NOT NULL DEFAULT -1,   -- next base = last_offset + 1
    log_start      bigint      NOT NULL DEFAULT 0,    -- first offset not deleted by retention
    txns_start     bigint      NOT NULL DEFAULT 0,    -- first offset whose log_txns row survives
    last_write_at  timestamptz NOT NULL DEFAULT now(),
    created_at     timestamptz NOT NULL DEFAULT now(),
    oldest_live_at timestamptz,
    oldest_txn_at  timestamptz,
    UNIQUE (queue_id, name)
);

-- Every push updates this row: headroom for HOT updates, threshold-driven
-- vacuum (the live row count is tiny next to the churn), and no heap
-- truncation, whose ACCESS EXCLUSIVE lock would stall every push and pop.
ALTER TABLE queen.log_partitions SET (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- Wildcard pop candidate scan: recently written partitions of one queue.
CREATE INDEX IF NOT EXISTS idx_log_partitions_queue_write
    ON queen.log_partitions (queue_id, last_write_at);

-- Retention work lists: only partitions that hold something can match.
-- Plain (not CONCURRENTLY) because the table is born with them in an
-- always-virgin deployment.
CREATE INDEX IF NOT EXISTS idx_log_partitions_queue_oldest
    ON queen.log_partitions (queue_id, oldest_live_at)
    WHERE oldest_live_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_log_partitions_queue_oldest_txn
    ON queen.log_partitions (queue_id, oldest_txn_at)
    WHERE oldest_txn_at IS NOT NULL;

-- -----------------------------------------------------------------------------
-- queen.log_segments
-- The messages: one row per pushed segment, blob = zstd(frames). The primary
-- key is also the pop path; there is deliberately no secondary index.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_segments (
    partition_id uuid        NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  bigint      NOT NULL,
    end_offset   bigint      NOT NULL,   -- inclusive; frames = end_offset - base_offset + 1
    created_at   timestamptz NOT NULL,
    blob         bytea       NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);

-- Already compressed by the broker: TOAST must store it out of line as is.
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;

-- Append-heavy with retention churn: moderate factors, fast unthrottled passes,
-- the same settings on the TOAST relation that holds the blobs.
ALTER TABLE queen.log_segments SET (
    autovacuum_vacuum_scale_factor = 0.1,
    autovacuum_vacuum_insert_scale_factor = 0.3,
    autovacuum_vacuum_cost_limit = 4000,
    autovacuum_vacuum_cost_delay = 0,
    toast.autovacuum_vacuum_scale_factor = 0.1,
    toast.autovacuum_vacuum_insert_scale_factor = 0.3,
    toast.autovacuum_vacuum_cost_limit = 4000,
    toast.autovacuum_vacuum_cost_delay = 0
);

-- -----------------------------------------------------------------------------
-- queen.log_txns
-- Hash sidecar, one row per segment, always written: 16 bytes (xxh3-128 of the
-- transactionId, big-endian) per frame in frame order. Serves the push dedup
-- probe and ack-by-hash resolution. No FK on purpose (the purge must not pay
-- FK triggers); the two partition deleters clear it explicitly.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_txns (
    partition_id uuid        NOT NULL,
    base_offset  bigint      NOT NULL,
    end_offset   bigint      NOT NULL,
    created_at   timestamptz NOT NULL,
    hashes       bytea       NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);

ALTER TABLE queen.log_txns SET (
    autovacuum_vacuum_scale_factor = 0.1,
    autovacuum_vacuum_insert_scale_factor = 0.3,
    autovacuum_vacuum_cost_delay = 0
);

-- -----------------------------------------------------------------------------
-- queen.log_consumers
-- Cursor, lease and retry budget per (partition, consumer group). committed is
-- the last completed offset; a live lease covers (committed, batch_end] and is
-- held by worker_id until lease_expires_at. lease_conflated marks a lease taken
-- by a conflating pop.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_consumers (
    partition_id      uuid        NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group    text        NOT NULL DEFAULT '__QUEUE_MODE__',
    committed         bigint      NOT NULL DEFAULT -1,
    batch_end         bigint,                         -- NULL = no lease
    worker_id         text,
    lease_expires_at  timestamptz,
    lease_acquired_at timestamptz,
    batch_retry_count integer     NOT NULL DEFAULT 0,
    attempt_offset    bigint,
    attempt_count     integer     NOT NULL DEFAULT 0,
    total_consumed    bigint      NOT NULL DEFAULT 0,
    lease_conflated   boolean     NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
);

-- Updated by every pop and ack: generous headroom, same vacuum regime as
-- log_partitions.
ALTER TABLE queen.log_consumers SET (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- -----------------------------------------------------------------------------
-- queen.hotlist_repairs
-- Durable announcement of a deliberate cursor move (seek, consumer-group
-- delete) that brokers read on their reconcile pass to repair hot-list rings.
-- Keyed by names because rings are. partition_name NULL = whole queue; two
-- repairs naming different partitions widen to NULL. Rows older than an hour
-- are pruned by the writer.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.hotlist_repairs (
    tenant_id      uuid        NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    queue_name     text        NOT NULL,
    consumer_group text        NOT NULL,
    partition_name text,
    repair_at      timestamptz NOT NULL DEFAULT now(),
    reason         text        NOT NULL,
    PRIMARY KEY (tenant_id, queue_name, consumer_group)
);

CREATE INDEX IF NOT EXISTS idx_hotlist_repairs_at ON queen.hotlist_repairs (repair_at);

-- The seek and group-delete procedures are SECURITY INVOKER and write here.
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.hotlist_repairs TO PUBLIC;

-- -----------------------------------------------------------------------------
-- queen.log_unnest_hashes: log_txns.hashes is 16 bytes per frame in frame
-- order; this yields (frame index, hash) so dedup probes and ack resolution can
-- join on the hash. IMMUTABLE so the planner may inline it.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_unnest_hashes(p_hashes bytea)
RETURNS TABLE (idx integer, hash bytea)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT i, substring(p_hashes FROM i * 16 + 1 FOR 16)
    FROM generate_series(0, length(p_hashes) / 16 - 1) AS i
$$;
