-- =============================================================================
-- 011_log_stats : readers of the observability surface over the log tables (the
-- /api/v1/status family): the shared helpers every status / analytics reader
-- uses, the live single-queue detail (GET /api/v1/status/queues/:queue) and the
-- message-volume series (GET /api/v1/status/analytics).
--
-- Readers only: nothing here writes. The queen.stats rows are written by the
-- stats cycle, not by this file.
--
-- Counting is watermark arithmetic over log_partitions and log_consumers,
-- O(partitions), never a scan of segment contents. Deletes are a prefix of
-- each partition's offsets, so for one partition:
--     retained   = last_offset - log_start + 1
--     floor      = GREATEST(worst committed cursor, log_start - 1)
--     pending    = last_offset - floor                  (floored at 0)
--     processing = live leased spans (committed, batch_end], at most pending
--     completed  = retained - pending - dead letters    (floored at 0)
-- where the worst cursor is the lowest committed offset of the named consumer
-- groups, and the queue-mode cursor only when no named group reads the
-- partition (a forgotten queue-mode pop must not pin a fully consumed
-- partition as pending); no cursor at all is -1, i.e. everything retained is
-- pending.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.obs_iso_v1: a timestamp as the observability JSON renders it (UTC,
-- milliseconds, trailing Z); NULL stays NULL.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.obs_iso_v1(p_ts timestamptz)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- -----------------------------------------------------------------------------
-- queen.obs_bucket_minutes_v1: the bucket width of a time window, shared by
-- /api/v1/status and every /api/v1/analytics series so their time axes line
-- up: up to 1 h -> 1 min, 6 h -> 5 min, 24 h -> 15 min, 7 d -> 60 min, beyond
-- -> 360 min (at most a few hundred points per series).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.obs_bucket_minutes_v1(p_from timestamptz, p_to timestamptz)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
               WHEN w <= 3600 THEN 1
               WHEN w <= 6 * 3600 THEN 5
               WHEN w <= 24 * 3600 THEN 15
               WHEN w <= 7 * 24 * 3600 THEN 60
               ELSE 360
           END
      FROM (SELECT EXTRACT(EPOCH FROM (p_to - p_from)) AS w) d
$$;

-- -----------------------------------------------------------------------------
-- queen.obs_bucket_v1: the start of the p_minutes-wide bucket holding p_ts,
-- aligned on the UTC epoch (so a 360-minute bucket starts at 00:00, 06:00...).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.obs_bucket_v1(p_ts timestamptz, p_minutes integer)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT date_bin(make_interval(mins => p_minutes), p_ts, timestamptz '2000-01-01 00:00:00+00')
$$;

-- -----------------------------------------------------------------------------
-- queen.obs_leaf_v1: one statistic of a sampled gauge in a system_metrics
-- document. A leaf is either {avg, min, max, last} or a bare number (then
-- every statistic is that number); anything else reads as NULL.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.obs_leaf_v1(p_leaf jsonb, p_stat text)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(p_leaf)
               WHEN 'number' THEN (p_leaf #>> '{}')::numeric
               WHEN 'object' THEN CASE WHEN jsonb_typeof(p_leaf -> p_stat) = 'number'
                                       THEN (p_leaf ->> p_stat)::numeric END
           END
$$;

-- -----------------------------------------------------------------------------
-- queen.obs_oldest_pending_at_v1: created_at of the segment that holds offset
-- p_offset of a partition, or of the first segment after it when retention
-- removed that offset; NULL when nothing is stored at or after it. Two
-- primary-key probes: the last segment starting at or before the offset
-- (kept only if it reaches the offset), else the first one starting after.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.obs_oldest_pending_at_v1(p_partition_id uuid, p_offset bigint)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT COALESCE(
        (SELECT CASE WHEN h.end_offset >= p_offset THEN h.created_at END
           FROM (SELECT s.end_offset, s.created_at
                   FROM queen.log_segments s
                  WHERE s.partition_id = p_partition_id AND s.base_offset <= p_offset
                  ORDER BY s.base_offset DESC
                  LIMIT 1) h),
        (SELECT s.created_at
           FROM queen.log_segments s
          WHERE s.partition_id = p_partition_id AND s.base_offset > p_offset
          ORDER BY s.base_offset
          LIMIT 1))
$$;

-- -----------------------------------------------------------------------------
-- queen.get_queue_detail_v2: GET /api/v1/status/queues/:queue, computed live.
-- NULL when the tenant has no queue of that name (the route answers 404).
-- Shape: {queue:{id, name, namespace, task, priority, createdAt, config:{...}},
-- partitions:[{id, name, createdAt, messages, stats, cursor, lastActivity,
-- oldestMessage, newestMessage}], totals:{messages}}. "failed" is null: the log
-- engine keeps no per-partition failure count. cursor.batchesConsumed is 0 (no
-- batch counter is kept); lastActivity is the latest lease taken.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_queue_detail_v2(p_queue text, p_tenant uuid)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_queue queen.queues%ROWTYPE;
    v_partitions jsonb;
    v_totals jsonb;
BEGIN
    SELECT * INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;

    WITH parts AS (
        SELECT p.id, p.name, p.created_at, p.last_offset, p.log_start
          FROM queen.log_partitions p
         WHERE p.queue_id = v_queue.id
    ),
    cursors AS (
        SELECT c.partition_id,
               COALESCE(MIN(c.committed) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__'),
                        MIN(c.committed) FILTER (WHERE c.consumer_group = '__QUEUE_MODE__')) AS worst,
               COALESCE(SUM(GREATEST(COALESCE(c.batch_end, c.committed) - c.committed, 0))
                            FILTER (WHERE c.lease_expires_at > now()), 0)::bigint AS leased,
               COALESCE(SUM(c.total_consumed), 0)::bigint AS consumed,
               MAX(c.lease_acquired_at) AS last_activity
          FROM queen.log_consumers c
          JOIN parts pa ON pa.id = c.partition_id
         GROUP BY c.partition_id
    ),
    dead AS (
        SELECT d.partition_id, COUNT(*)::bigint AS n
          FROM queen.log_dlq d
          JOIN parts pa ON pa.id = d.partition_id
         GROUP BY d.partition_id
    ),
    counted AS (
        SELECT pa.id, pa.name, pa.created_at,
               GREATEST(pa.last_offset - pa.log_start + 1, 0)::bigint AS total,
               GREATEST(pa.last_offset - GREATEST(COALESCE(cu.worst, -1), pa.log_start - 1), 0)::bigint AS pending,
               GREATEST(COALESCE(cu.worst, -1), pa.log_start - 1) AS floor_offset,
               COALESCE(cu.leased, 0) AS leased,
               COALESCE(cu.consumed, 0) AS consumed,
               cu.last_activity,
               COALESCE(dd.n, 0) AS dead_letter
          FROM parts pa
          LEFT JOIN cursors cu ON cu.partition_id = pa.id
          LEFT JOIN dead dd ON dd.partition_id = pa.id
    ),
    detailed AS (
        SELECT c.*,
               LEAST(c.leased, c.pending) AS processing,
               GREATEST(c.total - c.pending - c.dead_letter, 0) AS completed,
               CASE WHEN c.pending > 0 THEN queen.obs_oldest_pending_at_v1(c.id, c.floor_offset + 1) END AS oldest,
               (SELECT s.created_at FROM queen.log_segments s
                 WHERE s.partition_id = c.id ORDER BY s.base_offset DESC LIMIT 1) AS newest
          FROM counted c
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'id', r.id,
               'name', r.name,
               'createdAt', queen.obs_iso_v1(r.created_at),
               'messages', jsonb_build_object('total', r.total, 'pending', r.pending, 'processing', r.processing,
                                              'completed', r.completed, 'failed', NULL, 'deadLetter', r.dead_letter),
               'stats', jsonb_build_object('total', r.total, 'pending', r.pending, 'processing', r.processing,
                                           'completed', r.completed, 'failed', NULL, 'deadLetter', r.dead_letter),
               'cursor', jsonb_build_object('totalConsumed', r.consumed, 'batchesConsumed', 0),
               'lastActivity', queen.obs_iso_v1(r.last_activity),
               'oldestMessage', queen.obs_iso_v1(r.oldest),
               'newestMessage', queen.obs_iso_v1(r.newest)) ORDER BY r.name), '[]'::jsonb),
           jsonb_build_object('messages', jsonb_build_object(
               'total', COALESCE(SUM(r.total), 0), 'pending', COALESCE(SUM(r.pending), 0),
               'processing', COALESCE(SUM(r.processing), 0), 'completed', COALESCE(SUM(r.completed), 0),
               'failed', NULL, 'deadLetter', COALESCE(SUM(r.dead_letter), 0)))
      INTO v_partitions, v_totals
      FROM detailed r;

    RETURN jsonb_build_object(
        'queue', jsonb_build_object(
            'id', v_queue.id,
            'name', v_queue.name,
            'namespace', v_queue.namespace,
            'task', v_queue.task,
            'priority', v_queue.priority,
            'createdAt', queen.obs_iso_v1(v_queue.created_at),
            'config', jsonb_build_object(
                'leaseTime', v_queue.lease_time,
                'retryLimit', v_queue.retry_limit,
                'retryDelay', v_queue.retry_delay,
                'ttl', v_queue.ttl,
                'maxQueueSize', v_queue.max_queue_size,
                'deadLetterQueue', v_queue.dead_letter_queue)),
        'partitions', v_partitions,
        'totals', v_totals);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.get_analytics_v1: GET /api/v1/status/analytics, the tenant's message
-- volume per minute / hour / day between p_from and p_to: every bucket of the
-- window is present (0 when nothing arrived), oldest first. A segment's frames
-- count in the bucket of its creation time (the segment is the smallest unit
-- whose time is known without decoding). The one reader that scans
-- log_segments, bounded by the window and the route's bucket cap.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_analytics_v1(
    p_tenant uuid, p_from timestamptz, p_to timestamptz, p_interval text,
    p_queue text, p_namespace text, p_task text)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH buckets AS (
        SELECT generate_series(date_trunc(p_interval, p_from, 'UTC'),
                               date_trunc(p_interval, p_to, 'UTC'),
                               ('1 ' || p_interval)::interval) AS bucket
    ),
    volume AS (
        SELECT date_trunc(p_interval, s.created_at, 'UTC') AS bucket,
               SUM(s.end_offset - s.base_offset + 1)::bigint AS messages
          FROM queen.log_segments s
          JOIN queen.log_partitions p ON p.id = s.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         WHERE q.tenant_id = p_tenant
           AND s.created_at >= p_from AND s.created_at <= p_to
           AND (p_queue IS NULL OR q.name = p_queue)
           AND (p_namespace IS NULL OR q.namespace = p_namespace)
           AND (p_task IS NULL OR q.task = p_task)
         GROUP BY 1
    )
    SELECT jsonb_build_object(
        'dataPoints', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                           'timestamp', queen.obs_iso_v1(b.bucket),
                                           'messages', COALESCE(v.messages, 0)) ORDER BY b.bucket)
                                  FROM buckets b
                                  LEFT JOIN volume v ON v.bucket = b.bucket), '[]'::jsonb),
        'interval', p_interval,
        'from', queen.obs_iso_v1(p_from),
        'to', queen.obs_iso_v1(p_to))
$$;
