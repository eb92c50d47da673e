-- =============================================================================
-- 027_kv_quota : the quota poll every broker runs before it serves and then
-- periodically, whether or not it sweeps (broker/DESIGN.md, KV sweeper and
-- quotas).
--
-- queen.kv_quota_refresh_v1(p_max_tenants) -> jsonb array, one element per
-- tenant that has a quota row, a usage row, or both:
--   {tenant, granted, enabled, maxRows, maxBytes, maxTimers, maxHorizonS,
--    maxReadsPerSec, maxWritesPerSec, kvRows, kvBytes, timerRows,
--    computedAtMs}
-- granted: the tenant has a quota row (with a grant required, no row is a
-- denial, so a granted tenant that has written nothing yet must be listed).
-- A NULL limit is unlimited. computedAtMs is the measurement's instant (0 when
-- never measured), which is how a broker tells a new measurement from one it
-- has already adopted.
--
-- It reads two small tables and counts nothing: its cost must not grow with
-- the data it bounds. The answer is capped at p_max_tenants, granted tenants
-- first and then those nearest a limit, so the cap drops the tenants that
-- matter least to enforcement.
-- =============================================================================
CREATE OR REPLACE FUNCTION queen.kv_quota_refresh_v1(p_max_tenants integer)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(x.j ORDER BY x.granted DESC, x.nearest DESC, x.tenant_id), '[]'::jsonb)
      FROM (SELECT coalesce(q.tenant_id, u.tenant_id) AS tenant_id,
                   q.tenant_id IS NOT NULL AS granted,
                   greatest(coalesce(u.kv_rows::numeric / nullif(q.max_rows, 0), 0),
                            coalesce(u.kv_bytes::numeric / nullif(q.max_bytes, 0), 0),
                            coalesce(u.timer_rows::numeric / nullif(q.max_timers, 0), 0)) AS nearest,
                   jsonb_build_object(
                       'tenant', coalesce(q.tenant_id, u.tenant_id)::text,
                       'granted', q.tenant_id IS NOT NULL,
                       'enabled', coalesce(q.enabled, true),
                       'maxRows', q.max_rows,
                       'maxBytes', q.max_bytes,
                       'maxTimers', q.max_timers,
                       'maxHorizonS', q.max_timer_horizon_s,
                       'maxReadsPerSec', q.max_reads_per_sec,
                       'maxWritesPerSec', q.max_writes_per_sec,
                       'kvRows', coalesce(u.kv_rows, 0),
                       'kvBytes', coalesce(u.kv_bytes, 0),
                       'timerRows', coalesce(u.timer_rows, 0),
                       'computedAtMs', coalesce((extract(epoch FROM u.computed_at) * 1000)::bigint, 0)) AS j
              FROM queen.kv_quota q
              FULL JOIN queen.kv_usage u ON u.tenant_id = q.tenant_id
             ORDER BY 2 DESC, 3 DESC, 1
             LIMIT greatest(coalesce(p_max_tenants, 10000), 1)) x
$$;
