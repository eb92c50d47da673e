-- =============================================================================
-- 002_streams_schema : tables of the streaming engine (/streams/v1)
--
-- Kept in their own schema, queen_streams, as in the reference broker and the
-- management spec (tenant purge and grants name queen_streams.*).
-- =============================================================================

CREATE SCHEMA IF NOT EXISTS queen_streams;

-- -----------------------------------------------------------------------------
-- queen_streams.queries
-- One registered streaming query per (tenant, name). config_hash fingerprints
-- the operator chain; a mismatch without reset is refused (HTTP 409).
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen_streams.queries (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text        NOT NULL,
    source_queue text        NOT NULL,
    sink_queue   text,
    config_hash  text        NOT NULL,
    created_at   timestamptz DEFAULT now(),
    updated_at   timestamptz DEFAULT now(),
    tenant_id    uuid        NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001'
);

CREATE UNIQUE INDEX IF NOT EXISTS queries_tenant_name_uk ON queen_streams.queries (tenant_id, name);

-- -----------------------------------------------------------------------------
-- queen_streams.state
-- Operator state per (query, partition, key). partition_id is a
-- log_partitions id without FK: partition cleanup must not drop live state
-- (it refuses to reclaim a partition that still holds some instead).
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen_streams.state (
    query_id     uuid        NOT NULL REFERENCES queen_streams.queries (id) ON DELETE CASCADE,
    partition_id uuid        NOT NULL,
    key          text        NOT NULL,
    value        jsonb       NOT NULL,
    updated_at   timestamptz DEFAULT now(),
    PRIMARY KEY (query_id, partition_id, key)
);

CREATE INDEX IF NOT EXISTS idx_streams_state_updated_at ON queen_streams.state (updated_at);

-- -----------------------------------------------------------------------------
-- queen_streams.quota
-- Per-tenant grant for registering new queries. With tenancy on, a missing
-- row (or enabled = false) denies; the default tenant is never checked.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen_streams.quota (
    tenant_id   uuid        PRIMARY KEY,
    enabled     boolean     NOT NULL DEFAULT true,
    max_queries bigint,                      -- NULL = unlimited
    created_at  timestamptz DEFAULT now(),
    updated_at  timestamptz DEFAULT now()
);

GRANT USAGE ON SCHEMA queen_streams TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen_streams.queries TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen_streams.state TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen_streams.quota TO PUBLIC;
