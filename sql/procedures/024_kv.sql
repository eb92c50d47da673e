-- =============================================================================
-- 024_kv : tables of the transactional key/value store (/api/v1/kv and the
-- transaction-wire kv rider). kv_apply_v1 and its pure helpers are filled by
-- the KV/timers capability.
--
-- queen.kv is the outermost lock space of the engine (kv -> log_timers ->
-- advisory -> queues -> log_partitions -> log_consumers -> leaves); rows are
-- taken in (namespace, key) COLLATE "C" order. Nothing here names a
-- partition_id, on purpose.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.kv
-- One value per (tenant, namespace, key); the tenant is part of the key, so
-- no write can conflict across tenants. Name columns use COLLATE "C" so lock
-- order and prefix/cursor order are byte order on every machine. version is an
-- opaque token drawn from kv_version_seq (equality only). expires_at NULL means
-- forever (an explicit opt-in). shard spreads the sweeper's work over a fixed
-- 64 buckets and is stored so it can never move.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv (
    tenant_id  uuid                NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    namespace  text COLLATE "C"    NOT NULL,
    key        text COLLATE "C"    NOT NULL,
    value      jsonb               NOT NULL,
    version    bigint              NOT NULL,
    expires_at timestamptz,
    shard      smallint            NOT NULL
               GENERATED ALWAYS AS ((hashtextextended(key, 0) & 63)::smallint) STORED,
    created_at timestamptz         NOT NULL DEFAULT now(),
    updated_at timestamptz         NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, namespace, key)
);

-- Version tokens; a large cache avoids a WAL record per write.
CREATE SEQUENCE IF NOT EXISTS queen.kv_version_seq AS bigint START WITH 1 CACHE 1000;

-- Update-heavy counters and delete-heavy TTL rows: HOT headroom, threshold
-- vacuum, and never heap truncation (its ACCESS EXCLUSIVE lock would block
-- every reader of this table).
ALTER TABLE queen.kv SET (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- The only secondary index; its one reader is the sweeper's expiry prune.
-- Partial, so forever-keys cost nothing here.
CREATE INDEX IF NOT EXISTS idx_kv_shard_expires
    ON queen.kv (shard, expires_at) WHERE expires_at IS NOT NULL;

-- -----------------------------------------------------------------------------
-- queen.kv_quota
-- Per-tenant limits for KV and timers together, written by an operator or the
-- control plane. NULL = unlimited; with tenancy on, a missing row is a denial.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv_quota (
    tenant_id           uuid        PRIMARY KEY,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    enabled             boolean     NOT NULL DEFAULT true,
    max_rows            bigint,
    max_bytes           bigint,
    max_timers          bigint,
    max_timer_horizon_s bigint,
    max_reads_per_sec   integer,
    max_writes_per_sec  integer
);

-- -----------------------------------------------------------------------------
-- queen.kv_usage
-- Per-tenant measured occupancy, overwritten by the sweeper's usage rollup
-- (last writer wins on computed_at) and polled by every broker's quota
-- enforcer. Never touched by a request-path write.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv_usage (
    tenant_id    uuid        PRIMARY KEY,
    computed_at  timestamptz NOT NULL DEFAULT now(),
    kv_rows      bigint      NOT NULL DEFAULT 0,
    kv_bytes     bigint      NOT NULL DEFAULT 0,
    timer_rows   bigint      NOT NULL DEFAULT 0,
    timer_bytes  bigint      NOT NULL DEFAULT 0,
    timer_oldest timestamptz
);

-- Small and cold: threshold vacuum without the unthrottled cost setting, which
-- is reserved for the hot engine tables.
ALTER TABLE queen.kv_quota SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);
ALTER TABLE queen.kv_usage SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);

-- Procedures are SECURITY INVOKER; USAGE (not SELECT) on the sequence so its
-- last_value cannot be read as a global write counter.
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv_quota TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv_usage TO PUBLIC;
GRANT USAGE ON SEQUENCE queen.kv_version_seq TO PUBLIC;
