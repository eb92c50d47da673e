-- =============================================================================
-- 026_kv_sweeper : the sweeper's two slow phases over the KV store
-- (broker/DESIGN.md, KV sweeper and quotas).
--
--   queen.kv_expire_step_v1(shards, max_rows)  deletes expired queen.kv rows
--   queen.kv_usage_step_v1(min_interval_ms)    measures every tenant's KV and
--                                              timer occupancy into kv_usage
--
-- No request calls either. Every broker runs them (unless QUEEN_SWEEPER=false)
-- and none leads: the prune takes its rows with SKIP LOCKED, so two brokers on
-- the same shard split the rows instead of queueing, and it never waits on a
-- KV row a request holds; it touches no other lock space. The rollup reads
-- without row locks and writes only the leaf queen.kv_usage (last writer wins
-- on computed_at), so it cannot be part of a lock cycle either.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.kv_expire_step_v1(p_shards, p_max_rows) -> jsonb
-- Deletes at most p_max_rows rows whose expires_at has passed, walking the
-- shards in the order given (the caller rotates it so brokers start apart),
-- each through idx_kv_shard_expires, oldest expiry first. A row another
-- transaction holds is skipped, never waited for; one rewritten with a later
-- expiry between the scan and the delete is spared (the delete checks again).
-- Answers {deleted, done, backlog, backlogCapped}: done when no shard had more
-- expired rows than it was asked for, so the caller stops looping; backlog is
-- the expired rows still there (counted up to 10 x p_max_rows, a gauge and not
-- a census).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_expire_step_v1(p_shards smallint[], p_max_rows integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now     timestamptz := now();
    v_budget  integer := GREATEST(COALESCE(p_max_rows, 1000), 1);
    v_cap     bigint := GREATEST(COALESCE(p_max_rows, 1000), 1)::bigint * 10;
    v_shard   smallint;
    v_asked   integer;
    v_taken   integer;
    v_deleted bigint := 0;
    v_full    boolean := false;
    v_left    bigint := 0;
BEGIN
    IF p_shards IS NULL OR cardinality(p_shards) = 0 THEN
        RETURN jsonb_build_object('deleted', 0, 'done', true, 'backlog', 0, 'backlogCapped', false);
    END IF;
    FOREACH v_shard IN ARRAY p_shards LOOP
        EXIT WHEN v_budget <= 0;
        v_asked := v_budget;
        WITH doomed AS (
            SELECT k.tenant_id, k.namespace, k.key
              FROM queen.kv k
             WHERE k.shard = v_shard AND k.expires_at IS NOT NULL AND k.expires_at <= v_now
             ORDER BY k.expires_at
             LIMIT v_asked
               FOR UPDATE SKIP LOCKED
        ), gone AS (
            DELETE FROM queen.kv k
             USING doomed d
             WHERE k.tenant_id = d.tenant_id AND k.namespace = d.namespace AND k.key = d.key
               AND k.expires_at IS NOT NULL AND k.expires_at <= v_now
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM doomed)::integer, (SELECT count(*) FROM gone)::integer
          INTO v_asked, v_taken;
        v_deleted := v_deleted + v_taken;
        v_budget := v_budget - v_asked;
        -- A shard that filled what it was asked may hold more: not done yet.
        IF v_budget <= 0 THEN
            v_full := true;
        END IF;
    END LOOP;

    SELECT count(*) INTO v_left
      FROM (SELECT 1
              FROM unnest(p_shards) AS s(shard),
                   LATERAL (SELECT 1 FROM queen.kv k
                             WHERE k.shard = s.shard AND k.expires_at IS NOT NULL AND k.expires_at <= v_now
                             LIMIT v_cap + 1) x
             LIMIT v_cap + 1) y;
    RETURN jsonb_build_object('deleted', v_deleted, 'done', NOT v_full, 'backlog', LEAST(v_left, v_cap),
                              'backlogCapped', v_left > v_cap);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.kv_usage_step_v1(p_min_interval_ms) -> jsonb
-- Measures, per tenant, the live KV rows and their stored value bytes, and the
-- pending timers with their payload bytes and earliest delivery, and writes
-- them to queen.kv_usage with one computed_at. A tenant measured before but
-- holding nothing now is written as zeros, so a block it earned is released.
-- pg_column_size of the value column counts what the value occupies (after
-- TOAST compression) without reading it back out of TOAST.
-- Leaderless but not repeated: when another broker measured less than
-- p_min_interval_ms ago it answers {skipped: true} and does nothing. Two
-- brokers that both start at once both measure, which is only work twice.
-- Answers {skipped, tenants, computedAt}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_usage_step_v1(p_min_interval_ms integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now     timestamptz := now();
    v_last    timestamptz;
    v_tenants integer;
BEGIN
    SELECT max(u.computed_at) INTO v_last FROM queen.kv_usage u;
    IF v_last IS NOT NULL AND p_min_interval_ms IS NOT NULL AND p_min_interval_ms > 0
       AND v_last > v_now - make_interval(secs => p_min_interval_ms / 1000.0) THEN
        RETURN jsonb_build_object('skipped', true, 'tenants', 0, 'computedAt', v_last);
    END IF;

    INSERT INTO queen.kv_usage AS u (tenant_id, computed_at, kv_rows, kv_bytes, timer_rows, timer_bytes, timer_oldest)
    SELECT coalesce(kv.tenant_id, tm.tenant_id), v_now,
           coalesce(kv.n, 0), coalesce(kv.bytes, 0), coalesce(tm.n, 0), coalesce(tm.bytes, 0), tm.oldest
      FROM (SELECT k.tenant_id, count(*) AS n, sum(pg_column_size(k.value))::bigint AS bytes
              FROM queen.kv k
             WHERE k.expires_at IS NULL OR k.expires_at > v_now
             GROUP BY k.tenant_id) kv
      FULL JOIN (SELECT t.tenant_id, count(*) AS n, sum(octet_length(t.payload))::bigint AS bytes,
                        min(t.deliver_at) AS oldest
                   FROM queen.log_timers t
                  GROUP BY t.tenant_id) tm ON tm.tenant_id = kv.tenant_id
     -- One order for the upsert's row locks, whoever else writes the table.
     ORDER BY 1
    ON CONFLICT (tenant_id) DO UPDATE SET
        computed_at = EXCLUDED.computed_at, kv_rows = EXCLUDED.kv_rows, kv_bytes = EXCLUDED.kv_bytes,
        timer_rows = EXCLUDED.timer_rows, timer_bytes = EXCLUDED.timer_bytes, timer_oldest = EXCLUDED.timer_oldest;
    GET DIAGNOSTICS v_tenants = ROW_COUNT;

    UPDATE queen.kv_usage u
       SET computed_at = v_now, kv_rows = 0, kv_bytes = 0, timer_rows = 0, timer_bytes = 0, timer_oldest = NULL
     WHERE u.computed_at < v_now;

    RETURN jsonb_build_object('skipped', false, 'tenants', v_tenants, 'computedAt', v_now);
END;
$$;
