-- =============================================================================
-- 029_maintenance_leases : durable cadence of the cluster-singleton
-- maintenance tasks. Claim and release are single-row UPDATEs issued by the
-- broker's maintenance loops; there is no SQL function.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.maintenance_leases
-- One row per task ('retention', 'stats_refresh', 'retained_bytes'). A replica
-- claims a task when next_due_at <= now() and no live lease exists, bumping
-- fence; the release advances next_due_at (once, at release only) and is a
-- no-op unless it carries the current fence. enabled is an operator kill
-- switch that boot never overwrites; period_ms follows the broker config.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.maintenance_leases (
    task             text        PRIMARY KEY,
    period_ms        bigint      NOT NULL,
    next_due_at      timestamptz NOT NULL DEFAULT now(),
    lease_until      timestamptz,            -- lease expiry; NULL = free
    holder           text,                   -- server id of the current holder
    fence            bigint      NOT NULL DEFAULT 0,
    last_start_at    timestamptz,
    last_end_at      timestamptz,
    last_duration_ms integer,
    runs             bigint      NOT NULL DEFAULT 0,
    enabled          boolean     NOT NULL DEFAULT true
);

-- Our choice (the reference upserts these rows from the boot code): seed the
-- three tasks with the default periods (RETENTION_INTERVAL, STATS_INTERVAL_MS,
-- RETAINED_BYTES_INTERVAL_MS); boot may still update period_ms.
INSERT INTO queen.maintenance_leases (task, period_ms) VALUES
    ('retention', 5000),
    ('stats_refresh', 10000),
    ('retained_bytes', 600000)
ON CONFLICT (task) DO NOTHING;
