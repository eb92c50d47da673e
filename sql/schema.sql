-- =============================================================================
-- schema.sql : base DDL of the Queen broker (Java port, wire level 1.5.3)
--
-- Applied first at every boot, before procedures/001..033 in lexical order.
-- Each statement is idempotent, so a re-apply changes nothing. The model is
-- always-virgin: this file declares the final shape for an empty database and
-- carries no migration steps.
-- Floor: PostgreSQL 15 (cgm_identity_uk below needs NULLS NOT DISTINCT).
-- =============================================================================

CREATE SCHEMA IF NOT EXISTS queen;

-- -----------------------------------------------------------------------------
-- queen.queues
-- The single queue identity of the system, keyed (tenant_id, name). Every
-- partition, cursor, metric and stat row hangs off queues.id, so deleting the
-- row cascades the queue away. Besides identity it holds the whole /configure
-- option set. Rows are also created implicitly by push, pop, the transaction
-- wire, a streams sink and timers, and then carry the column defaults below
-- (lease 60 s, dedup window 3600 s, dead-lettering on).
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.queues (
    id                              uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    name                            varchar(255) NOT NULL,
    tenant_id                       uuid         NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    namespace                       varchar(255),
    task                            varchar(255),
    priority                        integer      DEFAULT 0,       -- stored and echoed only
    lease_time                      integer      DEFAULT 60,      -- seconds; /configure writes 300 when omitted
    retry_limit                     integer      DEFAULT 3,
    retry_delay                     integer      DEFAULT 1000,    -- ms; stored and echoed only
    ttl                             integer      DEFAULT 3600,    -- stored and echoed only
    dead_letter_queue               boolean      DEFAULT true,
    dlq_after_max_retries           boolean      DEFAULT true,
    delayed_processing              integer      DEFAULT 0,       -- seconds
    window_buffer                   integer      DEFAULT 0,       -- seconds
    retention_seconds               integer      DEFAULT 0,
    completed_retention_seconds     integer      DEFAULT 0,
    retention_enabled               boolean      DEFAULT false,
    encryption_enabled              boolean      DEFAULT false,
    max_wait_time_seconds           integer      DEFAULT 0,
    max_queue_size                  integer      DEFAULT 0,       -- wire key maxSize; not enforced
    min_pop_wait_time               integer      DEFAULT 0,       -- ms, clamped 0..60000 by configure
    dedup_window_seconds            integer      NOT NULL DEFAULT 3600,  -- 0 disables the push probe
    retention_sink_hold             text         NOT NULL DEFAULT '',    -- S3 sink name, '' = off
    retention_sink_hold_max_seconds integer      NOT NULL DEFAULT 604800,
    created_at                      timestamptz  DEFAULT now(),
    -- Not in the reference table; kept because our brief names it. Nullable, nothing depends on it.
    updated_at                      timestamptz  DEFAULT now()
);

-- Identity: every by-name resolve goes through this index.
CREATE UNIQUE INDEX IF NOT EXISTS queues_tenant_name_uk ON queen.queues (tenant_id, name);
CREATE INDEX IF NOT EXISTS idx_queues_name ON queen.queues (name);

-- -----------------------------------------------------------------------------
-- queen.consumer_groups_metadata
-- Registration of a consumer group: subscription mode/timestamp that seeds
-- cursors of partitions the group has not touched yet, plus the conflation
-- policy fixed at first registration. Queue-scoped rows point at queues(id);
-- namespace/task discovery subscriptions have queue_id NULL and keep their own
-- tenant_id for scoping.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.consumer_groups_metadata (
    id                     uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id              uuid        NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    consumer_group         text        NOT NULL,
    queue_id               uuid        REFERENCES queen.queues (id) ON DELETE CASCADE,
    partition_name         text        NOT NULL DEFAULT '',
    namespace              text        NOT NULL DEFAULT '',
    task                   text        NOT NULL DEFAULT '',
    subscription_mode      text        NOT NULL,
    subscription_timestamp timestamptz NOT NULL,
    conflation             boolean     NOT NULL DEFAULT false,  -- policy, deliberately not part of the identity
    created_at             timestamptz NOT NULL DEFAULT now()
);

-- Two discovery rows (queue_id NULL) for the same group/namespace/task must
-- collide, hence NULLS NOT DISTINCT (PostgreSQL 15+).
CREATE UNIQUE INDEX IF NOT EXISTS cgm_identity_uk
    ON queen.consumer_groups_metadata (tenant_id, consumer_group, queue_id, partition_name, namespace, task)
    NULLS NOT DISTINCT;
CREATE INDEX IF NOT EXISTS idx_cgm_queue ON queen.consumer_groups_metadata (queue_id);

-- -----------------------------------------------------------------------------
-- queen.consumer_watermarks
-- Per (queue, group) floor for the wildcard pop candidate scan: when a scan
-- finds nothing, later scans only look at partitions written since then.
-- Scoping is inherited from the queue row; the cascade clears it.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.consumer_watermarks (
    queue_id           uuid         NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group     varchar(255) NOT NULL DEFAULT '__QUEUE_MODE__',
    last_empty_scan_at timestamptz  NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    updated_at         timestamptz  NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, consumer_group)
);

-- -----------------------------------------------------------------------------
-- queen.retention_history
-- Audit of retention, completed-retention, max-wait eviction and partition
-- cleanup steps; read by the retention analytics. partition_id is a
-- log_partitions id without FK: the audit row outlives the partition.
-- Aged out together with the metrics tables.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.retention_history (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id     uuid,
    messages_deleted integer     DEFAULT 0,
    retention_type   varchar(50),
    executed_at      timestamptz DEFAULT now()
);

CREATE INDEX IF NOT EXISTS idx_retention_history_partition ON queen.retention_history (partition_id);
CREATE INDEX IF NOT EXISTS idx_retention_history_executed ON queen.retention_history (executed_at);

-- -----------------------------------------------------------------------------
-- queen.system_metrics
-- One JSON sample per replica per flush (CPU, memory, pool, uptime), behind
-- /api/v1/analytics/system-metrics and the status charts.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.system_metrics (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    "timestamp"  timestamptz NOT NULL,
    hostname     text        NOT NULL,
    port         integer     NOT NULL,
    worker_id    text        NOT NULL,
    sample_count integer     NOT NULL DEFAULT 60,
    metrics      jsonb       NOT NULL,
    CONSTRAINT unique_metric_per_replica UNIQUE ("timestamp", hostname, port, worker_id)
);

CREATE INDEX IF NOT EXISTS idx_system_metrics_timestamp ON queen.system_metrics ("timestamp" DESC);
CREATE INDEX IF NOT EXISTS idx_system_metrics_replica ON queen.system_metrics (hostname, port);
CREATE INDEX IF NOT EXISTS idx_system_metrics_worker ON queen.system_metrics (worker_id);
CREATE INDEX IF NOT EXISTS idx_system_metrics_metrics ON queen.system_metrics USING gin (metrics);

-- -----------------------------------------------------------------------------
-- queen.message_traces / queen.message_trace_names
-- Application trace events attached to a message (POST /api/v1/traces) and
-- their names. No FK to partitions: a trace outlives the segment it describes,
-- and queue deletion leaves traces behind by design.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.message_traces (
    id             uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    message_id     uuid,
    partition_id   uuid,
    transaction_id varchar(255) NOT NULL,
    consumer_group varchar(255),
    event_type     varchar(100),
    data           jsonb        NOT NULL,
    created_at     timestamptz  DEFAULT now(),
    worker_id      varchar(255)
);

CREATE INDEX IF NOT EXISTS idx_message_traces_message_id ON queen.message_traces (message_id);
CREATE INDEX IF NOT EXISTS idx_message_traces_transaction_partition ON queen.message_traces (transaction_id, partition_id);
CREATE INDEX IF NOT EXISTS idx_message_traces_created_at ON queen.message_traces (created_at DESC);
CREATE INDEX IF NOT EXISTS idx_message_traces_partition_id ON queen.message_traces (partition_id);

CREATE TABLE IF NOT EXISTS queen.message_trace_names (
    trace_id   uuid REFERENCES queen.message_traces (id) ON DELETE CASCADE,
    trace_name text NOT NULL,
    PRIMARY KEY (trace_id, trace_name)
);

CREATE INDEX IF NOT EXISTS idx_message_trace_names_name ON queen.message_trace_names (trace_name);
CREATE INDEX IF NOT EXISTS idx_message_trace_names_trace_id ON queen.message_trace_names (trace_id);

-- -----------------------------------------------------------------------------
-- queen.system_state
-- Cluster-wide switches mirrored from the in-process flags: maintenance_mode,
-- pop_maintenance_mode, kv_enabled, timers_schedule_enabled,
-- timers_fire_enabled, ephemeral_enabled; value is {"enabled": bool}.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.system_state (
    key        text        PRIMARY KEY,
    value      jsonb       NOT NULL,
    updated_at timestamptz DEFAULT now()
);

CREATE INDEX IF NOT EXISTS idx_system_state_key ON queen.system_state (key);

-- -----------------------------------------------------------------------------
-- queen.stats
-- Reconciled counters per hierarchy level (stat_type system / namespace /
-- task / queue / partition), written by the stats refresh and read by the
-- listings, overview and Prometheus. retained_bytes and segment_count are
-- written only by the retained-bytes slow lane (028).
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.stats (
    stat_type               varchar(20)   NOT NULL,
    stat_key                varchar(512)  NOT NULL,
    queue_id                uuid          REFERENCES queen.queues (id) ON DELETE CASCADE,
    partition_id            uuid,                     -- log_partitions id, no FK
    consumer_group          varchar(255)  DEFAULT '__QUEUE_MODE__',
    child_count             integer       NOT NULL DEFAULT 0,
    total_messages          bigint        NOT NULL DEFAULT 0,
    pending_messages        bigint        NOT NULL DEFAULT 0,
    processing_messages     bigint        NOT NULL DEFAULT 0,
    completed_messages      bigint        NOT NULL DEFAULT 0,
    dead_letter_messages    bigint        NOT NULL DEFAULT 0,
    retained_bytes          bigint        NOT NULL DEFAULT 0,
    segment_count           bigint        NOT NULL DEFAULT 0,
    oldest_pending_at       timestamptz,
    newest_message_at       timestamptz,              -- no writer left; kept for shape compatibility
    avg_lag_seconds         integer       DEFAULT 0,
    max_lag_seconds         integer       DEFAULT 0,
    median_lag_seconds      integer       DEFAULT 0,
    avg_offset_lag          integer       DEFAULT 0,
    max_offset_lag          integer       DEFAULT 0,
    ingested_per_second     numeric(10,2) DEFAULT 0,
    processed_per_second    numeric(10,2) DEFAULT 0,
    prev_total_messages     bigint        DEFAULT 0,
    prev_completed_messages bigint        DEFAULT 0,
    prev_snapshot_at        timestamptz,
    last_scanned_at         timestamptz,
    last_scanned_message_id uuid,
    last_computed_at        timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (stat_type, stat_key)
);

CREATE INDEX IF NOT EXISTS idx_stats_type ON queen.stats (stat_type);
CREATE INDEX IF NOT EXISTS idx_stats_queue_id ON queen.stats (queue_id) WHERE queue_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_stats_partition_id ON queen.stats (partition_id) WHERE partition_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_stats_computed ON queen.stats (last_computed_at);

-- Rewritten wholesale every refresh cycle: keep updates on-page and vacuum often.
ALTER TABLE queen.stats SET (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 50,
    autovacuum_vacuum_cost_delay = 0
);

-- -----------------------------------------------------------------------------
-- queen.stats_history
-- Time-bucketed snapshots of queen.stats for throughput charts.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.stats_history (
    stat_type            varchar(20)  NOT NULL,
    stat_key             varchar(512) NOT NULL,
    bucket_time          timestamptz  NOT NULL,
    total_messages       bigint       DEFAULT 0,
    pending_messages     bigint       DEFAULT 0,
    processing_messages  bigint       DEFAULT 0,
    completed_messages   bigint       DEFAULT 0,
    dead_letter_messages bigint       DEFAULT 0,
    messages_ingested    integer      DEFAULT 0,
    messages_processed   integer      DEFAULT 0,
    max_lag_seconds      integer      DEFAULT 0,
    PRIMARY KEY (stat_type, stat_key, bucket_time)
);

CREATE INDEX IF NOT EXISTS idx_stats_history_time ON queen.stats_history (bucket_time DESC);
CREATE INDEX IF NOT EXISTS idx_stats_history_lookup ON queen.stats_history (stat_type, stat_key, bucket_time DESC);
