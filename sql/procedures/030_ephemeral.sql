-- =============================================================================
-- 030_ephemeral : the whole database footprint of ephemeral (RAM-class)
-- queues: declared configurations and per-tenant grants, never messages. The
-- eph_config_* and eph_quota_list_v1 procedures are filled by the ephemeral
-- capability. Nothing here is touched inside a message transaction.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.ephemeral_queues
-- Declared queue configs (POST /api/v1/ephemeral/configure); read at boot so a
-- declared queue comes back configured and empty. Implicit queues never land
-- here. options is stored whole; the in-RAM engine clamps it.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.ephemeral_queues (
    tenant_id  uuid        NOT NULL,
    queue      text        NOT NULL,
    options    jsonb       NOT NULL DEFAULT '{}'::jsonb,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, queue)
);

-- -----------------------------------------------------------------------------
-- queen.ephemeral_quota
-- Per-tenant grant written by the control plane. NULL = unlimited; a missing
-- row is a denial once QUEEN_EPHEMERAL_REQUIRE_GRANT is on.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.ephemeral_quota (
    tenant_id        uuid        PRIMARY KEY,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    enabled          boolean     NOT NULL DEFAULT true,
    max_bytes        bigint,
    max_queues       integer,
    max_msgs_per_sec integer
);

-- Tiny and cold: threshold vacuum, no unthrottled cost setting.
ALTER TABLE queen.ephemeral_queues SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);
ALTER TABLE queen.ephemeral_quota SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);

GRANT SELECT, INSERT, UPDATE, DELETE ON queen.ephemeral_queues TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.ephemeral_quota TO PUBLIC;
