-- =============================================================================
-- 028_retained_bytes : the two queen.stats writers of the maintenance jobs.
--
--   log_stats_refresh_v1           the stats reconciler (STATS_INTERVAL_MS):
--                                  partition, queue, namespace, task and system
--                                  rows from the log tables' watermarks
--   log_refresh_retained_bytes_v1  the retained-bytes slow lane
--                                  (RETAINED_BYTES_INTERVAL_MS)
--
-- Both are cluster singletons (queen.maintenance_leases rows stats_refresh and
-- retained_bytes) and both write 'queue' rows, so both take those rows in
-- queue id order. Each owns its columns: the refresh never writes
-- retained_bytes or segment_count, the slow lane writes nothing else.
-- Namespace and task rows merge same-named namespaces across tenants, as the
-- reference's rollups do; tenant-scoped readers re-derive from 'queue' rows.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- Counts are watermark arithmetic, no scan of queen.log_segments (deletes are
-- prefix-contiguous, so frames retained = last_offset - log_start + 1 exactly):
--   worst      the slowest named group's committed offset; the group-less
--              '__QUEUE_MODE__' cursor speaks only when no named group has a
--              cursor (a stray queue-mode pop must not pin pending forever);
--              -1 when nobody has consumed
--   total      last_offset - log_start + 1
--   pending    last_offset - GREATEST(worst, log_start - 1)
--   processing frames under live leases, (committed, batch_end]
--   completed  total - pending - dead letters, floored at 0
-- The one per-partition probe is the created_at of the oldest pending frame's
-- segment: a backward primary-key probe, only for partitions with a backlog.
-- 'partition' rows come first; 'queue' rows are sums of them, and the
-- namespace, task and system rows sums of those.
-- Rates are deltas against the previous row, over at least 3 s.
-- Returns {"partitions","queues","namespaces","tasks": rows written,
-- "skipped": names of the queues left out}; an idle partition's row is
-- rewritten once a minute rather than every cycle.
--
-- Queues that vanish under the refresh (queue delete, tenant purge). The first
-- statement takes the queue rows FOR KEY SHARE SKIP LOCKED, and only the queues
-- it holds get partition and queue rows this pass. Held, a queue cannot be
-- deleted until the refresh commits, so the stats foreign key and the delete's
-- cascade into queen.stats never race an insert here. A queue a deleter already
-- holds (or a /configure FOR UPDATE, for its few ms) is skipped, its rows left
-- as they are, and refreshed at the next pass. Lock order (broker/DESIGN.md,
-- Lock order): queen.queues first, then the leaf queen.stats rows, as a queue
-- delete takes them; SKIP LOCKED means this statement never waits, and the
-- stats rows after it are taken in (stat_type, key) order.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_stats_refresh_v1()
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_partitions integer := 0;
    v_queues integer := 0;
    v_namespaces integer := 0;
    v_tasks integer := 0;
    v_live uuid[];
    v_skipped text[];
BEGIN
    -- The queues this pass writes, held until it commits; see the header.
    WITH seen AS (
        SELECT q.id, q.name FROM queen.queues q
    ), held AS (
        SELECT q.id FROM queen.queues q ORDER BY q.id FOR KEY SHARE SKIP LOCKED
    )
    SELECT COALESCE(array_agg(h.id ORDER BY h.id) FILTER (WHERE h.id IS NOT NULL), '{}'),
           COALESCE(array_agg(s.name ORDER BY s.name) FILTER (WHERE h.id IS NULL), '{}')
      INTO v_live, v_skipped
      FROM seen s
      FULL JOIN held h ON h.id = s.id;

    -- Rows of partitions, namespaces and tasks that no longer exist.
    DELETE FROM queen.stats s
    WHERE s.stat_type = 'partition'
      AND NOT EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = s.partition_id);
    DELETE FROM queen.stats s
    WHERE s.stat_type = 'namespace'
      AND NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.namespace = s.stat_key);
    DELETE FROM queen.stats s
    WHERE s.stat_type = 'task'
      AND NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.task = s.stat_key);

    -- ------------------------------------------------------------ partitions
    INSERT INTO queen.stats AS st (
        stat_type, stat_key, queue_id, partition_id, child_count,
        total_messages, pending_messages, processing_messages, completed_messages, dead_letter_messages,
        oldest_pending_at, avg_lag_seconds, max_lag_seconds, median_lag_seconds,
        avg_offset_lag, max_offset_lag, last_computed_at)
    SELECT 'partition', x.id::text, x.queue_id, x.id, x.groups,
           x.total, x.pending, LEAST(x.processing, x.pending), GREATEST(x.total - x.pending - x.dead, 0), x.dead,
           x.oldest_pending_at, x.lag, x.lag, x.lag,
           LEAST(x.pending, 2147483647), LEAST(x.pending, 2147483647), now()
    FROM (
        SELECT w.*,
               COALESCE(LEAST(EXTRACT(EPOCH FROM now() - w.oldest_pending_at), 2147483647)::integer, 0) AS lag
        FROM (
            SELECT p.*,
                   CASE WHEN p.pending > 0 THEN (
                       SELECT s.created_at FROM queen.log_segments s
                       WHERE s.partition_id = p.id AND s.base_offset <= p.wanted
                       ORDER BY s.base_offset DESC LIMIT 1)
                   END AS oldest_pending_at
            FROM (
                SELECT lp.id, lp.queue_id,
                       GREATEST(lp.last_offset - lp.log_start + 1, 0) AS total,
                       GREATEST(lp.last_offset - GREATEST(COALESCE(c.worst, -1), lp.log_start - 1), 0) AS pending,
                       GREATEST(COALESCE(c.worst, -1), lp.log_start - 1) + 1 AS wanted,
                       COALESCE(c.processing, 0) AS processing,
                       COALESCE(c.groups, 0) AS groups,
                       COALESCE(d.dead, 0) AS dead
                FROM queen.log_partitions lp
                LEFT JOIN (
                    SELECT lc.partition_id,
                           COALESCE(min(lc.committed) FILTER (WHERE lc.consumer_group <> '__QUEUE_MODE__'),
                                    min(lc.committed) FILTER (WHERE lc.consumer_group = '__QUEUE_MODE__')) AS worst,
                           sum(GREATEST(lc.batch_end - lc.committed, 0))
                               FILTER (WHERE lc.batch_end IS NOT NULL AND lc.lease_expires_at > now()) AS processing,
                           count(*) AS groups
                    FROM queen.log_consumers lc
                    GROUP BY lc.partition_id
                ) c ON c.partition_id = lp.id
                LEFT JOIN (
                    SELECT dl.partition_id, count(*) AS dead
                    FROM queen.log_dlq dl
                    GROUP BY dl.partition_id
                ) d ON d.partition_id = lp.id
                WHERE lp.queue_id = ANY (v_live)
            ) p
        ) w
    ) x
    ORDER BY x.id
    ON CONFLICT (stat_type, stat_key) DO UPDATE SET
        queue_id = EXCLUDED.queue_id,
        partition_id = EXCLUDED.partition_id,
        child_count = EXCLUDED.child_count,
        total_messages = EXCLUDED.total_messages,
        pending_messages = EXCLUDED.pending_messages,
        processing_messages = EXCLUDED.processing_messages,
        completed_messages = EXCLUDED.completed_messages,
        dead_letter_messages = EXCLUDED.dead_letter_messages,
        oldest_pending_at = EXCLUDED.oldest_pending_at,
        avg_lag_seconds = EXCLUDED.avg_lag_seconds,
        max_lag_seconds = EXCLUDED.max_lag_seconds,
        median_lag_seconds = EXCLUDED.median_lag_seconds,
        avg_offset_lag = EXCLUDED.avg_offset_lag,
        max_offset_lag = EXCLUDED.max_offset_lag,
        ingested_per_second = queen.stats_rate_v1(st.total_messages, EXCLUDED.total_messages,
                                                  st.last_computed_at, st.ingested_per_second),
        processed_per_second = queen.stats_rate_v1(st.completed_messages, EXCLUDED.completed_messages,
                                                   st.last_computed_at, st.processed_per_second),
        prev_total_messages = st.total_messages,
        prev_completed_messages = st.completed_messages,
        prev_snapshot_at = st.last_computed_at,
        last_computed_at = EXCLUDED.last_computed_at
    -- An idle partition's row is rewritten once a minute, not every cycle.
    WHERE (st.child_count, st.total_messages, st.pending_messages, st.processing_messages,
           st.dead_letter_messages, st.oldest_pending_at)
          IS DISTINCT FROM
          (EXCLUDED.child_count, EXCLUDED.total_messages, EXCLUDED.pending_messages, EXCLUDED.processing_messages,
           EXCLUDED.dead_letter_messages, EXCLUDED.oldest_pending_at)
       OR st.last_computed_at < now() - interval '1 minute';
    GET DIAGNOSTICS v_partitions = ROW_COUNT;

    -- ---------------------------------------------------------------- queues
    -- Every queue gets a row, a queue without partitions a row of zeros.
    INSERT INTO queen.stats AS st (
        stat_type, stat_key, queue_id, child_count,
        total_messages, pending_messages, processing_messages, completed_messages, dead_letter_messages,
        oldest_pending_at, avg_lag_seconds, max_lag_seconds, median_lag_seconds,
        avg_offset_lag, max_offset_lag, last_computed_at)
    SELECT 'queue', q.id::text, q.id, COALESCE(a.partitions, 0),
           COALESCE(a.total, 0), COALESCE(a.pending, 0), COALESCE(a.processing, 0),
           COALESCE(a.completed, 0), COALESCE(a.dead, 0),
           a.oldest_pending_at, COALESCE(a.avg_lag, 0), COALESCE(a.max_lag, 0), COALESCE(a.median_lag, 0),
           COALESCE(a.avg_offset_lag, 0), COALESCE(a.max_offset_lag, 0), now()
    FROM queen.queues q
    LEFT JOIN (
        SELECT ps.queue_id,
               count(*)::integer AS partitions,
               sum(ps.total_messages) AS total,
               sum(ps.pending_messages) AS pending,
               sum(ps.processing_messages) AS processing,
               sum(ps.completed_messages) AS completed,
               sum(ps.dead_letter_messages) AS dead,
               min(ps.oldest_pending_at) AS oldest_pending_at,
               -- Lags from the timestamps, not the partition rows' lag columns, which an idle
               -- partition's row refreshes only once a minute.
               COALESCE(LEAST(avg(EXTRACT(EPOCH FROM now() - ps.oldest_pending_at)), 2147483647), 0)::integer
                   AS avg_lag,
               COALESCE(LEAST(max(EXTRACT(EPOCH FROM now() - ps.oldest_pending_at)), 2147483647), 0)::integer
                   AS max_lag,
               COALESCE(LEAST(percentile_cont(0.5) WITHIN GROUP
                                  (ORDER BY EXTRACT(EPOCH FROM now() - ps.oldest_pending_at)), 2147483647), 0)::integer
                   AS median_lag,
               LEAST(avg(ps.pending_messages), 2147483647)::integer AS avg_offset_lag,
               LEAST(max(ps.pending_messages), 2147483647)::integer AS max_offset_lag
        FROM queen.stats ps
        WHERE ps.stat_type = 'partition'
        GROUP BY ps.queue_id
    ) a ON a.queue_id = q.id
    WHERE q.id = ANY (v_live)
    ORDER BY q.id
    ON CONFLICT (stat_type, stat_key) DO UPDATE SET
        queue_id = EXCLUDED.queue_id,
        child_count = EXCLUDED.child_count,
        total_messages = EXCLUDED.total_messages,
        pending_messages = EXCLUDED.pending_messages,
        processing_messages = EXCLUDED.processing_messages,
        completed_messages = EXCLUDED.completed_messages,
        dead_letter_messages = EXCLUDED.dead_letter_messages,
        oldest_pending_at = EXCLUDED.oldest_pending_at,
        avg_lag_seconds = EXCLUDED.avg_lag_seconds,
        max_lag_seconds = EXCLUDED.max_lag_seconds,
        median_lag_seconds = EXCLUDED.median_lag_seconds,
        avg_offset_lag = EXCLUDED.avg_offset_lag,
        max_offset_lag = EXCLUDED.max_offset_lag,
        ingested_per_second = queen.stats_rate_v1(st.total_messages, EXCLUDED.total_messages,
                                                  st.last_computed_at, st.ingested_per_second),
        processed_per_second = queen.stats_rate_v1(st.completed_messages, EXCLUDED.completed_messages,
                                                   st.last_computed_at, st.processed_per_second),
        prev_total_messages = st.total_messages,
        prev_completed_messages = st.completed_messages,
        prev_snapshot_at = st.last_computed_at,
        last_computed_at = EXCLUDED.last_computed_at;
    GET DIAGNOSTICS v_queues = ROW_COUNT;

    -- ------------------------------------------------- namespaces and tasks
    INSERT INTO queen.stats AS st (
        stat_type, stat_key, child_count,
        total_messages, pending_messages, processing_messages, completed_messages, dead_letter_messages,
        oldest_pending_at, avg_lag_seconds, max_lag_seconds, avg_offset_lag, max_offset_lag,
        ingested_per_second, processed_per_second, last_computed_at)
    SELECT g.kind, g.name, count(*)::integer,
           sum(s.total_messages), sum(s.pending_messages), sum(s.processing_messages),
           sum(s.completed_messages), sum(s.dead_letter_messages),
           min(s.oldest_pending_at), COALESCE(avg(s.avg_lag_seconds), 0)::integer, COALESCE(max(s.max_lag_seconds), 0),
           COALESCE(avg(s.avg_offset_lag), 0)::integer, COALESCE(max(s.max_offset_lag), 0),
           sum(s.ingested_per_second), sum(s.processed_per_second), now()
    FROM (
        SELECT 'namespace'::varchar AS kind, q.namespace AS name, q.id FROM queen.queues q
        WHERE q.namespace IS NOT NULL AND q.namespace <> ''
        UNION ALL
        SELECT 'task', q.task, q.id FROM queen.queues q
        WHERE q.task IS NOT NULL AND q.task <> ''
    ) g
    JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = g.id
    GROUP BY g.kind, g.name
    ORDER BY g.kind, g.name
    ON CONFLICT (stat_type, stat_key) DO UPDATE SET
        child_count = EXCLUDED.child_count,
        total_messages = EXCLUDED.total_messages,
        pending_messages = EXCLUDED.pending_messages,
        processing_messages = EXCLUDED.processing_messages,
        completed_messages = EXCLUDED.completed_messages,
        dead_letter_messages = EXCLUDED.dead_letter_messages,
        oldest_pending_at = EXCLUDED.oldest_pending_at,
        avg_lag_seconds = EXCLUDED.avg_lag_seconds,
        max_lag_seconds = EXCLUDED.max_lag_seconds,
        avg_offset_lag = EXCLUDED.avg_offset_lag,
        max_offset_lag = EXCLUDED.max_offset_lag,
        ingested_per_second = EXCLUDED.ingested_per_second,
        processed_per_second = EXCLUDED.processed_per_second,
        last_computed_at = EXCLUDED.last_computed_at;
    SELECT count(*) FILTER (WHERE s.stat_type = 'namespace'), count(*) FILTER (WHERE s.stat_type = 'task')
      INTO v_namespaces, v_tasks
      FROM queen.stats s WHERE s.stat_type IN ('namespace', 'task');

    -- ---------------------------------------------------------------- system
    -- child_count is the live partition count.
    INSERT INTO queen.stats AS st (
        stat_type, stat_key, child_count,
        total_messages, pending_messages, processing_messages, completed_messages, dead_letter_messages,
        oldest_pending_at, avg_lag_seconds, max_lag_seconds, median_lag_seconds, avg_offset_lag, max_offset_lag,
        ingested_per_second, processed_per_second, last_computed_at)
    SELECT 'system', 'global', (SELECT count(*)::integer FROM queen.log_partitions),
           COALESCE(sum(s.total_messages), 0), COALESCE(sum(s.pending_messages), 0),
           COALESCE(sum(s.processing_messages), 0), COALESCE(sum(s.completed_messages), 0),
           COALESCE(sum(s.dead_letter_messages), 0),
           min(s.oldest_pending_at), COALESCE(avg(s.avg_lag_seconds), 0)::integer, COALESCE(max(s.max_lag_seconds), 0),
           COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.max_lag_seconds), 0)::integer,
           COALESCE(avg(s.avg_offset_lag), 0)::integer, COALESCE(max(s.max_offset_lag), 0),
           COALESCE(sum(s.ingested_per_second), 0), COALESCE(sum(s.processed_per_second), 0), now()
    FROM queen.stats s
    WHERE s.stat_type = 'queue'
    ON CONFLICT (stat_type, stat_key) DO UPDATE SET
        child_count = EXCLUDED.child_count,
        total_messages = EXCLUDED.total_messages,
        pending_messages = EXCLUDED.pending_messages,
        processing_messages = EXCLUDED.processing_messages,
        completed_messages = EXCLUDED.completed_messages,
        dead_letter_messages = EXCLUDED.dead_letter_messages,
        oldest_pending_at = EXCLUDED.oldest_pending_at,
        avg_lag_seconds = EXCLUDED.avg_lag_seconds,
        max_lag_seconds = EXCLUDED.max_lag_seconds,
        median_lag_seconds = EXCLUDED.median_lag_seconds,
        avg_offset_lag = EXCLUDED.avg_offset_lag,
        max_offset_lag = EXCLUDED.max_offset_lag,
        ingested_per_second = EXCLUDED.ingested_per_second,
        processed_per_second = EXCLUDED.processed_per_second,
        prev_total_messages = st.total_messages,
        prev_completed_messages = st.completed_messages,
        prev_snapshot_at = st.last_computed_at,
        last_computed_at = EXCLUDED.last_computed_at;

    RETURN jsonb_build_object('partitions', v_partitions, 'queues', v_queues,
                              'namespaces', v_namespaces, 'tasks', v_tasks,
                              'skipped', to_jsonb(v_skipped));
END;
$$;

-- -----------------------------------------------------------------------------
-- Per-second rate of a counter between two refreshes, for the stats rows. Only
-- over at least 3 s (replicas' refreshes may land close together and a tiny
-- denominator makes a spike); a counter that went down (retention removed
-- frames) reads as 0. Below 3 s the previous rate is kept.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.stats_rate_v1(
    p_previous bigint, p_current bigint, p_previous_at timestamptz, p_previous_rate numeric)
RETURNS numeric
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN p_previous_at IS NULL OR EXTRACT(EPOCH FROM now() - p_previous_at) < 3 THEN COALESCE(p_previous_rate, 0)
        ELSE LEAST(round(GREATEST(p_current - p_previous, 0)::numeric / EXTRACT(EPOCH FROM now() - p_previous_at), 2),
                   99999999.99)
    END
$$;

-- -----------------------------------------------------------------------------
-- Retained-bytes slow lane: payload bytes (compressed, as stored) and segment
-- count per queue, into the 'queue' stat rows. The one aggregate that must
-- scan queen.log_segments (octet_length of a STORAGE EXTERNAL blob reads the
-- TOAST pointer, not the data), hence its own slow cadence rather than an index
-- on the push path's table. The scan runs first, holding no row locks; only
-- then are the queue rows taken FOR KEY SHARE SKIP LOCKED and the stat rows of
-- the queues held locked, in queue id order, and written. A queue with no
-- segments is written 0, never skipped; a queue whose stat row the refresh
-- has not created yet is filled at the next pass. A queue deleted since the
-- scan, or held by a delete or a tenant purge right now, is left out: waiting
-- for the stat row a purge's cascade holds, while the stats refresh waits for
-- a stat row held here and the purge for a queue the refresh holds, was a
-- three-way deadlock. Holding the queue, no deleter holds its stat row, so
-- this lane only ever waits for the refresh, which takes the same rows in the
-- same order.
-- Returns {"queuesUpdated": n, "bytesTotal": b, "segmentsTotal": s}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_refresh_retained_bytes_v1()
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_queue_ids uuid[];
    v_bytes bigint[];
    v_segments bigint[];
    v_held uuid[];
    v_updated integer := 0;
BEGIN
    SELECT COALESCE(array_agg(t.id ORDER BY t.id), '{}'),
           COALESCE(array_agg(t.bytes ORDER BY t.id), '{}'),
           COALESCE(array_agg(t.segments ORDER BY t.id), '{}')
      INTO v_queue_ids, v_bytes, v_segments
      FROM (
        SELECT q.id, COALESCE(b.bytes, 0) AS bytes, COALESCE(b.segments, 0) AS segments
        FROM queen.queues q
        LEFT JOIN (
            SELECT lp.queue_id, sum(octet_length(s.blob))::bigint AS bytes, count(*)::bigint AS segments
            FROM queen.log_segments s
            JOIN queen.log_partitions lp ON lp.id = s.partition_id
            GROUP BY lp.queue_id
        ) b ON b.queue_id = q.id
      ) t;

    SELECT COALESCE(array_agg(h.id ORDER BY h.id), '{}') INTO v_held
      FROM (SELECT q.id FROM queen.queues q
             WHERE q.id = ANY (v_queue_ids)
             ORDER BY q.id
               FOR KEY SHARE SKIP LOCKED) h;

    PERFORM 1
      FROM queen.stats st
     WHERE st.stat_type = 'queue' AND st.queue_id = ANY (v_held)
     ORDER BY st.queue_id
       FOR UPDATE;

    UPDATE queen.stats st
       SET retained_bytes = u.bytes,
           segment_count = u.segments
      FROM unnest(v_queue_ids, v_bytes, v_segments) AS u(queue_id, bytes, segments)
     WHERE st.stat_type = 'queue' AND st.queue_id = u.queue_id AND u.queue_id = ANY (v_held);
    GET DIAGNOSTICS v_updated = ROW_COUNT;

    RETURN jsonb_build_object(
        'queuesUpdated', v_updated,
        'bytesTotal', (SELECT COALESCE(sum(b), 0) FROM unnest(v_bytes) AS b),
        'segmentsTotal', (SELECT COALESCE(sum(s), 0) FROM unnest(v_segments) AS s));
END;
$$;
