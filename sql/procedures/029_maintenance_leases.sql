-- =============================================================================
-- 029_maintenance_leases : durable cadence of the cluster-singleton
-- maintenance tasks. Claim and release are single-row UPDATEs wrapped in the
-- three functions at the end of this file, called by the broker's loops.
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

-- -----------------------------------------------------------------------------
-- The election, as three single-row functions the broker's maintenance loops
-- call (broker/.../jobs). The database clock decides what is due, so replica
-- clocks and replica count do not change the cluster cadence: the configured
-- period IS the cluster period. The session advisory locks (737001 retention,
-- 737002 stats, 737003 retained bytes) stay in the loops as a belt.
-- -----------------------------------------------------------------------------

-- Boot: make sure the task row exists with this broker's period. Never touches
-- enabled (operator-owned), the lease or the fence. A shorter period also pulls
-- next_due_at in, so it takes effect within one new period.
CREATE OR REPLACE FUNCTION queen.maintenance_ensure_v1(p_task text, p_period_ms bigint)
RETURNS void
LANGUAGE sql AS $$
    INSERT INTO queen.maintenance_leases AS t (task, period_ms)
    VALUES (p_task, p_period_ms)
    ON CONFLICT (task) DO UPDATE
       SET period_ms = EXCLUDED.period_ms,
           next_due_at = LEAST(t.next_due_at, now() + EXCLUDED.period_ms * interval '1 millisecond')
$$;

-- Claim: succeeds for exactly one caller per due period, because the row is
-- updated only while it is enabled, due and free (or its lease has expired, so
-- a holder that died mid-cycle is replaced after lease_until). Returns the new
-- fence, or NULL when the task is not this caller's to run now. next_due_at is
-- deliberately NOT moved here: moving it at claim and again at release would
-- halve the cadence.
CREATE OR REPLACE FUNCTION queen.maintenance_claim_v1(p_task text, p_holder text, p_lease_ms bigint)
RETURNS bigint
LANGUAGE sql AS $$
    UPDATE queen.maintenance_leases t
       SET lease_until = now() + p_lease_ms * interval '1 millisecond',
           holder = p_holder,
           fence = t.fence + 1,
           last_start_at = now()
     WHERE t.task = p_task
       AND t.enabled
       AND t.next_due_at <= now()
       AND (t.lease_until IS NULL OR t.lease_until <= now())
    RETURNING t.fence
$$;

-- Release: frees the lease and advances next_due_at by exactly one period
-- (fixed rate; a task running late is due again at once but never tries to
-- make up more than one missed period). A failed cycle is released the same
-- way, so a cycle that throws keeps its cadence instead of spinning. Only the
-- holder of the current fence can release: a holder whose lease expired and was
-- taken over gets false and changes nothing.
CREATE OR REPLACE FUNCTION queen.maintenance_release_v1(p_task text, p_fence bigint, p_duration_ms integer)
RETURNS boolean
LANGUAGE sql AS $$
    WITH released AS (
        UPDATE queen.maintenance_leases t
           SET next_due_at = GREATEST(t.next_due_at + t.period_ms * interval '1 millisecond', now()),
               lease_until = NULL,
               holder = NULL,
               last_end_at = now(),
               last_duration_ms = p_duration_ms,
               runs = t.runs + 1
         WHERE t.task = p_task AND t.fence = p_fence
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM released)
$$;
