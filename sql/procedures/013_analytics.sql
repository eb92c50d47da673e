-- =============================================================================
-- 013_analytics : queue deletion and the queue listings of the resources routes
-- (broker/DESIGN.md, Management plane). Analytics readers may be added to this
-- file later, in their own block below the queue block.
-- =============================================================================

-- =============================================================================
-- QUEUE BLOCK: delete_queue_v1 and the /api/v1/resources/* readers.
--
-- The readers are named queue_*_v1 / *_list_v1 / system_overview_v1 rather than
-- after the reference's get_queues_v2 & co, so they never collide with a
-- same-named stats reader another file may define. Every reader is scoped to
-- one tenant (queues.tenant_id) except system_overview_v1 for the default
-- tenant, which the reference broker answers cell-wide. Timestamps are rendered
-- UTC with microseconds and a literal Z; AT TIME ZONE 'UTC' keeps the Z honest
-- on a session whose TimeZone is not UTC.
--
-- Counts use watermark arithmetic (no segment scans):
--   retained frames = last_offset - log_start + 1
--   pending         = last_offset - GREATEST(worst committed, log_start - 1)
-- where the worst cursor of a partition is the lowest committed offset of its
-- named consumer groups, or of the queue-mode cursor when no named group has
-- one (an abandoned queue-mode pop must not pin a partition's pending).
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.delete_queue_v1(name, tenant) -> {deleted: true, queue, existed}
-- One atomic call. Locks in the lock order (broker/DESIGN.md, Lock order): the
-- queues row, then the queue's partitions ascending by id, then the leaf
-- tables. log_txns and log_dlq have no foreign key (nor do retention_history
-- and streams state, which name partition ids), so they are cleared explicitly
-- with the partition ids read under the locks (state after the cascade, see
-- below); deleting the queues row then
-- cascades to log_partitions (-> log_segments, log_consumers),
-- consumer_watermarks, the queue's consumer_groups_metadata rows,
-- queue_lag_metrics and queen.stats. hotlist_repairs and queue_parked_replica
-- are keyed by (tenant, queue name) and are cleared by name so a queue
-- re-created under that name starts clean. The queue's pending timers
-- (log_timers, by tenant and queue name) go too, and first: a timer left behind
-- would fire into the deleted name and re-create the queue, and the timer rows
-- are taken before the queue row, as the global lock order has it (a fire
-- holding one of them finishes first; its rows are then gone and the fire's
-- hold finds nothing to deliver). Left behind on purpose: message_traces (the
-- reference broker keeps traces of deleted queues).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.delete_queue_v1(
    p_queue_name text,
    p_tenant uuid DEFAULT '00000000-0000-0000-0000-000000000001')
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_queue_id uuid;
    v_partitions uuid[];
BEGIN
    -- plpgsql resolves queen.log_timers (025) when this runs, not when it is created.
    DELETE FROM queen.log_timers t WHERE t.tenant_id = p_tenant AND t.queue = p_queue_name;
    SELECT q.id INTO v_queue_id FROM queen.queues q
     WHERE q.tenant_id = p_tenant AND q.name = p_queue_name
       FOR UPDATE;
    IF v_queue_id IS NOT NULL THEN
        SELECT COALESCE(array_agg(l.id), ARRAY[]::uuid[]) INTO v_partitions
          FROM (SELECT lp.id FROM queen.log_partitions lp
                 WHERE lp.queue_id = v_queue_id
                 ORDER BY lp.id
                   FOR UPDATE) l;
        DELETE FROM queen.log_txns t WHERE t.partition_id = ANY (v_partitions);
        DELETE FROM queen.log_dlq d WHERE d.partition_id = ANY (v_partitions);
        DELETE FROM queen.retention_history h WHERE h.partition_id = ANY (v_partitions);
        DELETE FROM queen.queues q WHERE q.id = v_queue_id;
        -- After the cascade took the cursors: queen_streams.state follows
        -- queen.log_consumers in the lock order (a streams cycle acks, then
        -- writes state). A cycle reading this queue holds the queue row KEY
        -- SHARE (007), so the FOR UPDATE above waited for it and this
        -- statement sees the state it committed.
        DELETE FROM queen_streams.state s WHERE s.partition_id = ANY (v_partitions);
        DELETE FROM queen.hotlist_repairs r WHERE r.tenant_id = p_tenant AND r.queue_name = p_queue_name;
        DELETE FROM queen.queue_parked_replica r WHERE r.tenant_id = p_tenant AND r.queue_name = p_queue_name;
    END IF;
    RETURN jsonb_build_object('deleted', true, 'queue', p_queue_name, 'existed', v_queue_id IS NOT NULL);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.queue_partition_ids_v1(name, tenant) -> the queue's partition ids
-- Read by the broker just before delete_queue_v1, to drop what its dedup cache
-- holds of them once the delete committed (that cache is keyed by partition id).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.queue_partition_ids_v1(p_queue_name text, p_tenant uuid)
RETURNS SETOF uuid
LANGUAGE sql STABLE AS $$
    SELECT lp.id FROM queen.queues q JOIN queen.log_partitions lp ON lp.queue_id = q.id
    WHERE q.tenant_id = p_tenant AND q.name = p_queue_name
$$;

-- -----------------------------------------------------------------------------
-- queen.queue_list_v1(tenant, live) -> {queues: [...]}
-- GET /api/v1/resources/queues. pending / processing / retainedBytes and the
-- segment count come from the queue's queen.stats row (reconciler cadence;
-- zero before its first pass). live = true recounts partitions and retained
-- frames now (O(the tenant's partitions)); live = false (?stats=cached, the
-- proxy's reconciler poll) serves the stats row as is. pending is reported
-- net of processing, as the reference's list does. Newest queue first.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.queue_list_v1(p_tenant uuid, p_live boolean)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('queues', COALESCE(jsonb_agg(jsonb_build_object(
               'id', q.id,
               'name', q.name,
               'namespace', COALESCE(q.namespace, ''),
               'task', COALESCE(q.task, ''),
               'createdAt', to_char(q.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               'partitions', CASE WHEN p_live THEN lp.partitions ELSE COALESCE(s.child_count, 0) END,
               'retainedBytes', COALESCE(s.retained_bytes, 0),
               'segments', jsonb_build_object(
                   'segments', COALESCE(s.segment_count, 0),
                   'messages', CASE WHEN p_live THEN lp.frames ELSE COALESCE(s.total_messages, 0) END),
               'messages', jsonb_build_object(
                   'total', CASE WHEN p_live THEN lp.frames ELSE COALESCE(s.total_messages, 0) END,
                   'pending', GREATEST(0, COALESCE(s.pending_messages, 0) - COALESCE(s.processing_messages, 0)),
                   'processing', COALESCE(s.processing_messages, 0)))
           ORDER BY q.created_at DESC, q.name), '[]'::jsonb))
      FROM queen.queues q
      LEFT JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = q.id
      LEFT JOIN LATERAL (
          SELECT count(*)::bigint AS partitions,
                 COALESCE(sum(GREATEST(p.last_offset - p.log_start + 1, 0)), 0)::bigint AS frames
            FROM queen.log_partitions p
           WHERE p_live AND p.queue_id = q.id
      ) lp ON true
     WHERE q.tenant_id = p_tenant
$$;

-- -----------------------------------------------------------------------------
-- queen.queue_detail_v1(name, tenant) -> jsonb, NULL when the tenant has no
-- such queue. GET /api/v1/resources/queues/:queue: identity, the whole
-- configuration under `options` (every key /configure accepts, spelled as it
-- echoes them), each partition with live stats and its oldest pending and
-- newest message times, totals, retainedBytes (stats row) and the live
-- segment count. failed is always null: the log engine keeps no per-partition
-- failure counter. processing is the live leased span, capped at pending.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.queue_detail_v1(p_queue_name text, p_tenant uuid)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_queue queen.queues%ROWTYPE;
    v_partitions jsonb;
    v_totals jsonb;
    v_frames bigint;
    v_segments bigint;
BEGIN
    SELECT * INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue_name;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;

    WITH parts AS (
        SELECT lp.id, lp.name, lp.created_at, lp.last_offset, lp.log_start
          FROM queen.log_partitions lp
         WHERE lp.queue_id = v_queue.id
    ), cursors AS (
        SELECT c.partition_id,
               COALESCE(min(c.committed) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__'),
                        min(c.committed) FILTER (WHERE c.consumer_group = '__QUEUE_MODE__')) AS worst,
               COALESCE(sum(GREATEST(0, COALESCE(c.batch_end, c.committed) - c.committed))
                            FILTER (WHERE c.lease_expires_at > now()), 0)::bigint AS leased
          FROM queen.log_consumers c
          JOIN parts pa ON pa.id = c.partition_id
         GROUP BY c.partition_id
    ), dead AS (
        SELECT d.partition_id, count(*)::bigint AS dead_letter
          FROM queen.log_dlq d
          JOIN parts pa ON pa.id = d.partition_id
         GROUP BY d.partition_id
    ), counted AS (
        SELECT pa.id, pa.name, pa.created_at,
               GREATEST(pa.last_offset - pa.log_start + 1, 0)::bigint AS total,
               GREATEST(pa.last_offset - GREATEST(COALESCE(cu.worst, -1), pa.log_start - 1), 0)::bigint AS pending,
               GREATEST(COALESCE(cu.worst, -1), pa.log_start - 1) AS floor_offset,
               COALESCE(cu.leased, 0) AS leased,
               COALESCE(de.dead_letter, 0) AS dead_letter
          FROM parts pa
          LEFT JOIN cursors cu ON cu.partition_id = pa.id
          LEFT JOIN dead de ON de.partition_id = pa.id
    ), per_partition AS (
        SELECT ct.id, ct.name, ct.created_at, ct.total, ct.pending, ct.dead_letter,
               LEAST(ct.leased, ct.pending) AS processing,
               GREATEST(0, ct.total - ct.pending - ct.dead_letter) AS completed,
               -- Oldest pending: the segment holding the first pending offset,
               -- or the next one after a retention gap (two PK probes).
               CASE WHEN ct.pending > 0 THEN COALESCE(
                   (SELECT s.created_at FROM queen.log_segments s
                     WHERE s.partition_id = ct.id AND s.base_offset <= ct.floor_offset + 1
                       AND s.end_offset >= ct.floor_offset + 1
                     ORDER BY s.base_offset DESC LIMIT 1),
                   (SELECT s.created_at FROM queen.log_segments s
                     WHERE s.partition_id = ct.id AND s.base_offset > ct.floor_offset + 1
                     ORDER BY s.base_offset LIMIT 1)) END AS oldest_message,
               (SELECT s.created_at FROM queen.log_segments s
                 WHERE s.partition_id = ct.id
                 ORDER BY s.base_offset DESC LIMIT 1) AS newest_message
          FROM counted ct
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'id', pp.id,
               'name', pp.name,
               'createdAt', to_char(pp.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               'stats', jsonb_build_object(
                   'total', pp.total, 'pending', pp.pending, 'processing', pp.processing,
                   'completed', pp.completed, 'failed', NULL, 'deadLetter', pp.dead_letter),
               'oldestMessage', to_char(pp.oldest_message AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               'newestMessage', to_char(pp.newest_message AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
               ORDER BY pp.name), '[]'::jsonb),
           jsonb_build_object(
               'total', COALESCE(sum(pp.total), 0), 'pending', COALESCE(sum(pp.pending), 0),
               'processing', COALESCE(sum(pp.processing), 0), 'completed', COALESCE(sum(pp.completed), 0),
               'failed', NULL, 'deadLetter', COALESCE(sum(pp.dead_letter), 0)),
           COALESCE(sum(pp.total), 0)::bigint
      INTO v_partitions, v_totals, v_frames
      FROM per_partition pp;

    -- A per-request admin read, bounded by this queue's live segments (PK index).
    SELECT count(*)::bigint INTO v_segments
      FROM queen.log_segments s
      JOIN queen.log_partitions lp ON lp.id = s.partition_id
     WHERE lp.queue_id = v_queue.id;

    RETURN jsonb_build_object(
        'id', v_queue.id,
        'name', v_queue.name,
        'namespace', COALESCE(v_queue.namespace, ''),
        'task', COALESCE(v_queue.task, ''),
        'createdAt', to_char(v_queue.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'options', jsonb_build_object(
            'namespace', COALESCE(v_queue.namespace, ''),
            'task', COALESCE(v_queue.task, ''),
            'priority', v_queue.priority,
            'leaseTime', v_queue.lease_time,
            'retryLimit', v_queue.retry_limit,
            'retryDelay', v_queue.retry_delay,
            'maxSize', v_queue.max_queue_size,
            'ttl', v_queue.ttl,
            'deadLetterQueue', v_queue.dead_letter_queue,
            'dlqAfterMaxRetries', v_queue.dlq_after_max_retries,
            'delayedProcessing', v_queue.delayed_processing,
            'windowBuffer', v_queue.window_buffer,
            'retentionSeconds', v_queue.retention_seconds,
            'completedRetentionSeconds', v_queue.completed_retention_seconds,
            'retentionEnabled', v_queue.retention_enabled,
            'encryptionEnabled', v_queue.encryption_enabled,
            'maxWaitTimeSeconds', v_queue.max_wait_time_seconds,
            'minPopWaitTime', v_queue.min_pop_wait_time,
            'dedupWindowSeconds', v_queue.dedup_window_seconds,
            'retentionSinkHold', v_queue.retention_sink_hold,
            'retentionSinkHoldMaxSeconds', v_queue.retention_sink_hold_max_seconds),
        'partitions', v_partitions,
        'totals', v_totals,
        'retainedBytes', COALESCE((SELECT s.retained_bytes FROM queen.stats s
                                    WHERE s.stat_type = 'queue' AND s.queue_id = v_queue.id), 0),
        'segments', jsonb_build_object('segments', v_segments, 'messages', v_frames));
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.queue_depth_v1(name, group, tenant) -> jsonb, NULL when the tenant
-- has no such queue. GET /api/v1/resources/queues/:queue/depth: watermark and
-- lease arithmetic per partition, no segment reads.
--   group NULL: the worst cursor (named groups first, queue mode otherwise);
--               processing sums every live lease, capped at pending.
--   group set : that group's own cursor and lease; a partition where the
--               group has no cursor owes its whole retained range.
-- effectivePending (and effectiveReady) count partitions rather than
-- positions for a conflating group: one delivery per non-empty partition.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.queue_depth_v1(p_queue_name text, p_group text, p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'queue', q.name,
        'group', p_group,
        'pending', COALESCE(d.pending, 0),
        'processing', COALESCE(d.processing, 0),
        'ready', COALESCE(d.ready, 0),
        'partitionsPending', COALESCE(d.partitions_pending, 0),
        'partitionsReady', COALESCE(d.partitions_ready, 0),
        'conflation', COALESCE(g.conflation, false),
        'effectivePending', CASE WHEN COALESCE(g.conflation, false)
                                 THEN COALESCE(d.partitions_pending, 0) ELSE COALESCE(d.pending, 0) END,
        'effectiveReady', CASE WHEN COALESCE(g.conflation, false)
                               THEN COALESCE(d.partitions_ready, 0) ELSE COALESCE(d.ready, 0) END,
        'partitions', COALESCE(d.partitions, '[]'::jsonb))
      FROM queen.queues q
      LEFT JOIN queen.consumer_groups_metadata g
        ON p_group IS NOT NULL AND g.tenant_id = q.tenant_id AND g.queue_id = q.id
       AND g.consumer_group = p_group AND g.partition_name = '' AND g.namespace = '' AND g.task = ''
      LEFT JOIN LATERAL (
          SELECT sum(t.pending)::bigint AS pending,
                 sum(t.processing)::bigint AS processing,
                 sum(t.pending - t.processing)::bigint AS ready,
                 count(*) FILTER (WHERE t.pending > 0)::bigint AS partitions_pending,
                 count(*) FILTER (WHERE t.pending - t.processing > 0)::bigint AS partitions_ready,
                 jsonb_agg(jsonb_build_object('partition', t.name, 'pending', t.pending,
                                              'processing', t.processing, 'ready', t.pending - t.processing)
                           ORDER BY t.name) AS partitions
            FROM (
                SELECT b.name, b.pending, LEAST(b.pending, b.leased) AS processing
                  FROM (
                      SELECT p.name,
                             GREATEST(p.last_offset - GREATEST(COALESCE(c.committed, -1), p.log_start - 1), 0)::bigint
                                 AS pending,
                             COALESCE(c.leased, 0)::bigint AS leased
                        FROM queen.log_partitions p
                        LEFT JOIN LATERAL (
                            SELECT lc.committed,
                                   CASE WHEN lc.lease_expires_at > now()
                                        THEN GREATEST(0, COALESCE(lc.batch_end, lc.committed) - lc.committed)
                                        ELSE 0 END AS leased
                              FROM queen.log_consumers lc
                             WHERE p_group IS NOT NULL
                               AND lc.partition_id = p.id AND lc.consumer_group = p_group
                            UNION ALL
                            SELECT COALESCE(min(lc.committed) FILTER (WHERE lc.consumer_group <> '__QUEUE_MODE__'),
                                            min(lc.committed) FILTER (WHERE lc.consumer_group = '__QUEUE_MODE__')),
                                   COALESCE(sum(GREATEST(0, COALESCE(lc.batch_end, lc.committed) - lc.committed))
                                                FILTER (WHERE lc.lease_expires_at > now()), 0)
                              FROM queen.log_consumers lc
                             WHERE lc.partition_id = p.id
                            -- An aggregate always yields a row; HAVING drops this arm for a named group.
                            HAVING p_group IS NULL
                        ) c ON true
                       WHERE p.queue_id = q.id
                  ) b
            ) t
      ) d ON true
     WHERE q.tenant_id = p_tenant AND q.name = p_queue_name
$$;

-- -----------------------------------------------------------------------------
-- queen.namespace_list_v1(tenant) / queen.task_list_v1(tenant)
-- GET /api/v1/resources/namespaces and /tasks: one entry per non-empty label
-- of the tenant's queues, with its queue count, live partition count and the
-- stats rows' totals (pending net of processing, as in the queue list).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.namespace_list_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('namespaces', COALESCE(jsonb_agg(jsonb_build_object(
               'namespace', t.label,
               'queues', t.queues,
               'partitions', t.partitions,
               'messages', jsonb_build_object('total', t.total, 'pending', GREATEST(0, t.pending - t.processing)))
           ORDER BY t.label), '[]'::jsonb))
      FROM (
          SELECT q.namespace AS label,
                 count(*)::bigint AS queues,
                 COALESCE(sum(lp.partitions), 0)::bigint AS partitions,
                 COALESCE(sum(s.total_messages), 0)::bigint AS total,
                 COALESCE(sum(s.pending_messages), 0)::bigint AS pending,
                 COALESCE(sum(s.processing_messages), 0)::bigint AS processing
            FROM queen.queues q
            LEFT JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = q.id
            LEFT JOIN LATERAL (SELECT count(*) AS partitions FROM queen.log_partitions p
                                WHERE p.queue_id = q.id) lp ON true
           WHERE q.tenant_id = p_tenant AND COALESCE(q.namespace, '') <> ''
           GROUP BY q.namespace
      ) t
$$;

CREATE OR REPLACE FUNCTION queen.task_list_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('tasks', COALESCE(jsonb_agg(jsonb_build_object(
               'task', t.label,
               'queues', t.queues,
               'partitions', t.partitions,
               'messages', jsonb_build_object('total', t.total, 'pending', GREATEST(0, t.pending - t.processing)))
           ORDER BY t.label), '[]'::jsonb))
      FROM (
          SELECT q.task AS label,
                 count(*)::bigint AS queues,
                 COALESCE(sum(lp.partitions), 0)::bigint AS partitions,
                 COALESCE(sum(s.total_messages), 0)::bigint AS total,
                 COALESCE(sum(s.pending_messages), 0)::bigint AS pending,
                 COALESCE(sum(s.processing_messages), 0)::bigint AS processing
            FROM queen.queues q
            LEFT JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = q.id
            LEFT JOIN LATERAL (SELECT count(*) AS partitions FROM queen.log_partitions p
                                WHERE p.queue_id = q.id) lp ON true
           WHERE q.tenant_id = p_tenant AND COALESCE(q.task, '') <> ''
           GROUP BY q.task
      ) t
$$;

-- -----------------------------------------------------------------------------
-- queen.system_overview_v1(tenant, cell_wide) -> jsonb
-- GET /api/v1/resources/overview. With p_cell_wide (the broker trusts no tenant
-- header, so the default tenant is the whole cell) the default tenant gets the
-- cell-wide body, as the reference broker answers it: counts over every queue, message totals
-- preferring the all-time worker_metrics_summary counters, throughput and lag
-- from the last five minutes of worker_metrics. Any other tenant gets a body
-- derived only from its own queues: its queen.stats rows and its
-- queue_lag_metrics, so cell-wide counters never leak across tenants.
-- Partitions: the system stats row once a refresh wrote it (cell-wide), else a
-- live count. statsAge is -1 until the stats refresh has run once.
-- -----------------------------------------------------------------------------
-- With tenants (the header trusted) the default tenant is one tenant among
-- others and gets its own body like any of them: the reference's cell-wide
-- answer there would count other tenants' queues, namespaces and tasks.
CREATE OR REPLACE FUNCTION queen.system_overview_v1(p_tenant uuid, p_cell_wide boolean)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_cell boolean := p_cell_wide AND p_tenant = '00000000-0000-0000-0000-000000000001'::uuid;
    v_queues bigint;
    v_namespaces bigint;
    v_tasks bigint;
    v_partitions bigint;
    v_agg record;
    -- Scalars, not %ROWTYPE: worker_metrics_summary is created by 019, after this file.
    v_summary_pushed bigint;
    v_summary_acked bigint;
    v_summary_failed bigint;
    v_summary_dlq bigint;
    v_system_partitions bigint;
    v_system_at timestamptz;
    v_pushed_5m numeric;
    v_acked_5m numeric;
    v_lag record;
    v_messages jsonb;
    v_lag_json jsonb;
    v_stats_age integer;
BEGIN
    SELECT count(*), count(DISTINCT NULLIF(q.namespace, '')), count(DISTINCT NULLIF(q.task, ''))
      INTO v_queues, v_namespaces, v_tasks
      FROM queen.queues q
     WHERE v_cell OR q.tenant_id = p_tenant;

    SELECT COALESCE(sum(s.total_messages), 0) AS total,
           COALESCE(sum(s.pending_messages), 0) AS pending,
           COALESCE(sum(s.processing_messages), 0) AS processing,
           COALESCE(sum(s.completed_messages), 0) AS completed,
           COALESCE(sum(s.dead_letter_messages), 0) AS dead_letter,
           COALESCE(avg(s.avg_lag_seconds)::integer, 0) AS avg_lag,
           COALESCE(max(s.max_lag_seconds), 0) AS max_lag,
           COALESCE((percentile_cont(0.5) WITHIN GROUP (ORDER BY s.max_lag_seconds))::integer, 0) AS median_lag,
           COALESCE(avg(s.pending_messages)::integer, 0) AS avg_offset,
           COALESCE(max(s.pending_messages), 0) AS max_offset,
           max(s.last_computed_at) AS computed_at
      INTO v_agg
      FROM queen.stats s
      JOIN queen.queues q ON q.id = s.queue_id
     WHERE s.stat_type = 'queue' AND (v_cell OR q.tenant_id = p_tenant);

    IF v_cell THEN
        SELECT s.child_count, s.last_computed_at INTO v_system_partitions, v_system_at
          FROM queen.stats s WHERE s.stat_type = 'system' AND s.stat_key = 'global';
        v_partitions := v_system_partitions;
    END IF;
    IF v_partitions IS NULL THEN
        SELECT count(*) INTO v_partitions
          FROM queen.log_partitions lp
          JOIN queen.queues q ON q.id = lp.queue_id
         WHERE v_cell OR q.tenant_id = p_tenant;
    END IF;

    IF v_cell THEN
        SELECT w.total_push_messages, w.total_ack_success, w.total_ack_failed, w.total_dlq
          INTO v_summary_pushed, v_summary_acked, v_summary_failed, v_summary_dlq
          FROM queen.worker_metrics_summary w WHERE w.id = 1;
        SELECT COALESCE(sum(w.push_message_count), 0), COALESCE(sum(w.ack_message_count), 0)
          INTO v_pushed_5m, v_acked_5m
          FROM queen.worker_metrics w
         WHERE w.bucket_time >= now() - interval '5 minutes';
        -- Lag is sampled at pop only: no sample must fall back to the stats rows, not read as 0.
        SELECT CASE WHEN sum(w.lag_count) > 0
                    THEN (sum(w.avg_lag_ms * w.lag_count) / sum(w.lag_count) / 1000)::integer END AS avg_s,
               CASE WHEN sum(w.lag_count) > 0 THEN (max(w.max_lag_ms) / 1000)::integer END AS max_s
          INTO v_lag
          FROM queen.worker_metrics w
         WHERE w.bucket_time >= now() - interval '5 minutes';
        v_messages := jsonb_build_object(
            'total', COALESCE(NULLIF(v_summary_pushed, 0), v_agg.total),
            'pending', GREATEST(0, v_agg.pending - v_agg.processing),
            'processing', v_agg.processing,
            'completed', COALESCE(NULLIF(v_summary_acked, 0), v_agg.completed),
            'failed', COALESCE(v_summary_failed, 0),
            'deadLetter', COALESCE(NULLIF(v_summary_dlq, 0), v_agg.dead_letter));
        v_lag_json := jsonb_build_object(
            'time', jsonb_build_object('avg', COALESCE(v_lag.avg_s, v_agg.avg_lag), 'median', v_agg.median_lag,
                                       'min', 0, 'max', COALESCE(v_lag.max_s, v_agg.max_lag)),
            'offset', jsonb_build_object('avg', v_agg.avg_offset, 'median', 0, 'min', 0, 'max', v_agg.max_offset));
    ELSE
        SELECT COALESCE(sum(m.push_message_count), 0), COALESCE(sum(m.ack_success_count + m.ack_failed_count), 0)
          INTO v_pushed_5m, v_acked_5m
          FROM queen.queue_lag_metrics m
          JOIN queen.queues q ON q.id = m.queue_id
         WHERE q.tenant_id = p_tenant AND m.bucket_time >= now() - interval '5 minutes';
        v_messages := jsonb_build_object(
            'total', v_agg.total,
            'pending', GREATEST(0, v_agg.pending - v_agg.processing),
            'processing', v_agg.processing,
            'completed', v_agg.completed,
            'failed', 0,
            'deadLetter', v_agg.dead_letter);
        v_lag_json := jsonb_build_object(
            'time', jsonb_build_object('avg', v_agg.avg_lag, 'median', v_agg.median_lag, 'min', 0, 'max', v_agg.max_lag),
            'offset', jsonb_build_object('avg', v_agg.avg_offset, 'median', 0, 'min', 0, 'max', v_agg.max_offset));
    END IF;
    -- Age of the newest reconciled stats row; -1 = the stats refresh never ran.
    v_stats_age := CASE WHEN COALESCE(v_agg.computed_at, v_system_at) IS NOT NULL
                        THEN EXTRACT(EPOCH FROM (now() - COALESCE(v_agg.computed_at, v_system_at)))::integer
                        ELSE -1 END;

    RETURN jsonb_build_object(
        'queues', v_queues,
        'partitions', v_partitions,
        'namespaces', v_namespaces,
        'tasks', v_tasks,
        'messages', v_messages,
        'lag', v_lag_json,
        'throughput', jsonb_build_object(
            'ingestedPerSecond', round(v_pushed_5m / 300, 2),
            'processedPerSecond', round(v_acked_5m / 300, 2)),
        'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'statsAge', v_stats_age);
END;
$$;

-- The one-argument form, for brokers of the release before (a roll runs old and
-- new brokers over one schema): cell-wide for the default tenant, as it was.
CREATE OR REPLACE FUNCTION queen.system_overview_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT queen.system_overview_v1(p_tenant, true)
$$;

-- =============================================================================
-- END OF QUEUE BLOCK
-- =============================================================================

-- =============================================================================
-- ANALYTICS BLOCK: readers of GET /api/v1/analytics/{queue-lag, queue-ops,
-- queue-parked-replicas, worker-metrics} (broker/DESIGN.md, Management plane).
--
-- They read the per-minute tables the per-replica metrics collector fills
-- (queue_lag_metrics, queue_parked_replica, worker_metrics and its summary
-- row) and never write. Buckets follow queen.obs_bucket_minutes_v1 (011), the
-- same widths as /api/v1/status. The queue readers are scoped to one tenant;
-- worker-metrics is cell-wide. Lag is measured at pop time, so a bucket with
-- no pop has no lag sample: those read null, never a reassuring 0.
-- The bodies are plpgsql because the metrics tables are created by 019, after
-- this file: plpgsql resolves names when it runs, a LANGUAGE sql body when it
-- is created.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_queue_lag_v1: a bare array, newest bucket first, of
-- {queueName, popCount, avgLagMs, maxLagMs, bucketMinutes, bucketTime}.
-- The bucket width rides on every point because the array has no envelope.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_queue_lag_v1(
    p_tenant uuid, p_from timestamptz, p_to timestamptz, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (
        WITH width AS (
            SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
        ),
        rolled AS (
            SELECT q.name AS queue_name,
                   queen.obs_bucket_v1(m.bucket_time, w.minutes) AS bucket,
                   SUM(m.pop_count) AS pops,
                   CASE WHEN SUM(m.pop_count) > 0
                        THEN ROUND(SUM(m.avg_lag_ms * m.pop_count)::numeric / SUM(m.pop_count)) END AS avg_lag,
                   CASE WHEN SUM(m.pop_count) > 0 THEN MAX(m.max_lag_ms) END AS max_lag
              FROM queen.queue_lag_metrics m
              JOIN queen.queues q ON q.id = m.queue_id
             CROSS JOIN width w
             WHERE q.tenant_id = p_tenant
               AND (p_queue IS NULL OR q.name = p_queue)
               AND m.bucket_time >= p_from AND m.bucket_time <= p_to
             GROUP BY 1, 2
        )
        SELECT COALESCE(jsonb_agg(jsonb_build_object(
                   'queueName', r.queue_name,
                   'popCount', r.pops,
                   'avgLagMs', r.avg_lag,
                   'maxLagMs', r.max_lag,
                   'bucketMinutes', (SELECT minutes FROM width),
                   'bucketTime', queen.obs_iso_v1(r.bucket)) ORDER BY r.bucket DESC, r.queue_name), '[]'::jsonb)
          FROM rolled r
    );
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.get_queue_ops_v1: {timeRange, bucketMinutes, series:[{bucket,
-- queueName, pushRequests, pushMessages, popMessages, popEmpty, ackRequests,
-- ackSuccess, ackFailed, transactions, partitionsCreated, partitionsDeleted,
-- partitionCount, avgLagMs, maxLagMs, pushPerSecond, popPerSecond,
-- ackPerSecond, emptyPerSecond, parkedCount}] oldest first, queues:[names]}.
-- parkedCount is a gauge: averaged over the minutes of a bucket, not summed.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_queue_ops_v1(
    p_tenant uuid, p_from timestamptz, p_to timestamptz, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (
        WITH width AS (
            SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
        ),
        rolled AS (
            SELECT queen.obs_bucket_v1(m.bucket_time, w.minutes) AS bucket,
                   q.name AS queue_name,
                   SUM(m.push_request_count) AS push_req,
                   SUM(m.push_message_count) AS push_msg,
                   SUM(m.pop_count) AS pop_msg,
                   SUM(m.pop_empty_count) AS pop_empty,
                   SUM(m.ack_request_count) AS ack_req,
                   SUM(m.ack_success_count) AS ack_ok,
                   SUM(m.ack_failed_count) AS ack_failed,
                   SUM(m.transaction_count) AS txns,
                   SUM(m.partitions_created) AS created,
                   SUM(m.partitions_deleted) AS deleted,
                   MAX(m.partition_count) AS partition_count,
                   CASE WHEN SUM(m.pop_count) > 0
                        THEN ROUND(SUM(m.avg_lag_ms * m.pop_count)::numeric / SUM(m.pop_count)) END AS avg_lag,
                   CASE WHEN SUM(m.pop_count) > 0 THEN MAX(m.max_lag_ms) END AS max_lag,
                   AVG(COALESCE(m.parked_count, 0)) AS parked
              FROM queen.queue_lag_metrics m
              JOIN queen.queues q ON q.id = m.queue_id
             CROSS JOIN width w
             WHERE q.tenant_id = p_tenant
               AND (p_queue IS NULL OR q.name = p_queue)
               AND m.bucket_time >= p_from AND m.bucket_time <= p_to
             GROUP BY 1, 2
        )
        SELECT jsonb_build_object(
            'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
            'bucketMinutes', (SELECT minutes FROM width),
            'series', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                           'bucket', queen.obs_iso_v1(r.bucket),
                                           'queueName', r.queue_name,
                                           'pushRequests', r.push_req,
                                           'pushMessages', r.push_msg,
                                           'popMessages', r.pop_msg,
                                           'popEmpty', r.pop_empty,
                                           'ackRequests', r.ack_req,
                                           'ackSuccess', r.ack_ok,
                                           'ackFailed', r.ack_failed,
                                           'transactions', r.txns,
                                           'partitionsCreated', r.created,
                                           'partitionsDeleted', r.deleted,
                                           'partitionCount', r.partition_count,
                                           'avgLagMs', r.avg_lag,
                                           'maxLagMs', r.max_lag,
                                           'pushPerSecond', ROUND(r.push_msg / (w.minutes * 60.0), 2),
                                           'popPerSecond', ROUND(r.pop_msg / (w.minutes * 60.0), 2),
                                           'ackPerSecond', ROUND((r.ack_ok + r.ack_failed) / (w.minutes * 60.0), 2),
                                           'emptyPerSecond', ROUND(r.pop_empty / (w.minutes * 60.0), 2),
                                           'parkedCount', ROUND(r.parked, 2)) ORDER BY r.bucket, r.queue_name)
                                  FROM rolled r CROSS JOIN width w), '[]'::jsonb),
            'queues', COALESCE((SELECT jsonb_agg(DISTINCT r.queue_name ORDER BY r.queue_name) FROM rolled r), '[]'::jsonb))
    );
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.get_queue_parked_per_replica_v1: the parked long-poll gauge per
-- (queue, replica): {timeRange, bucketMinutes, series:[{bucket, queueName,
-- hostname, workerId, parkedCount}] oldest first, replicas:[{hostname,
-- workerId}]}. queue_parked_replica is keyed by queue name and tenant.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_queue_parked_per_replica_v1(
    p_tenant uuid, p_from timestamptz, p_to timestamptz, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (
        WITH width AS (
            SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
        ),
        rolled AS (
            SELECT queen.obs_bucket_v1(r.bucket_time, w.minutes) AS bucket,
                   r.queue_name, r.hostname, r.worker_id,
                   AVG(COALESCE(r.parked_count, 0)) AS parked
              FROM queen.queue_parked_replica r
             CROSS JOIN width w
             WHERE r.tenant_id = p_tenant
               AND (p_queue IS NULL OR r.queue_name = p_queue)
               AND r.bucket_time >= p_from AND r.bucket_time <= p_to
             GROUP BY 1, 2, 3, 4
        )
        SELECT jsonb_build_object(
            'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
            'bucketMinutes', (SELECT minutes FROM width),
            'series', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                           'bucket', queen.obs_iso_v1(r.bucket),
                                           'queueName', r.queue_name,
                                           'hostname', r.hostname,
                                           'workerId', r.worker_id,
                                           'parkedCount', ROUND(r.parked, 2))
                                       ORDER BY r.bucket, r.queue_name, r.hostname, r.worker_id)
                                  FROM rolled r), '[]'::jsonb),
            'replicas', COALESCE((SELECT jsonb_agg(jsonb_build_object('hostname', x.hostname, 'workerId', x.worker_id)
                                                   ORDER BY x.hostname, x.worker_id)
                                    FROM (SELECT DISTINCT r.hostname, r.worker_id FROM rolled r) x), '[]'::jsonb))
    );
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.get_worker_metrics_timeseries_v1: GET /api/v1/analytics/worker-metrics,
-- cell-wide. {timeRange, bucketMinutes, pointCount, timeSeries:[...] newest
-- first, workers:[replicas seen in the last 5 minutes], queues:[per-queue pop
-- count and lag over the window, busiest first], summary:{lifetime totals}}.
-- Columns this broker never measures (job queue, backoff ring) read null.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_worker_metrics_timeseries_v1(
    p_from timestamptz, p_to timestamptz, p_queue text, p_hostname text, p_worker_id integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (
        WITH width AS (
            SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
        ),
        rolled AS (
            SELECT queen.obs_bucket_v1(m.bucket_time, w.minutes) AS bucket,
                   SUM(m.push_message_count) AS push_msg,
                   SUM(m.pop_message_count) AS pop_msg,
                   SUM(m.ack_message_count) AS ack_msg,
                   SUM(m.push_request_count) AS push_req,
                   SUM(m.pop_request_count) AS pop_req,
                   SUM(m.ack_request_count) AS ack_req,
                   SUM(m.jobs_done) AS jobs,
                   ROUND(AVG(m.avg_event_loop_lag_ms)) AS avg_loop_lag,
                   MAX(m.max_event_loop_lag_ms) AS max_loop_lag,
                   ROUND(AVG(m.avg_free_slots)) AS avg_free_slots,
                   MIN(m.min_free_slots) AS min_free_slots,
                   MAX(m.db_connections) AS db_connections,
                   NULLIF(ROUND(AVG(m.avg_job_queue_size)), 0) AS avg_job_queue,
                   NULLIF(MAX(m.max_job_queue_size), 0) AS max_job_queue,
                   NULLIF(MAX(m.backoff_size), 0) AS backoff,
                   CASE WHEN SUM(m.lag_count) > 0
                        THEN ROUND(SUM(m.avg_lag_ms * m.lag_count)::numeric / SUM(m.lag_count)) END AS avg_lag,
                   CASE WHEN SUM(m.lag_count) > 0 THEN MAX(m.max_lag_ms) END AS max_lag,
                   SUM(m.lag_count) AS lag_count,
                   SUM(m.db_error_count) AS db_errors,
                   SUM(m.ack_success_count) AS ack_ok,
                   SUM(m.ack_failed_count) AS ack_failed,
                   SUM(m.dlq_count) AS dlq
              FROM queen.worker_metrics m
             CROSS JOIN width w
             WHERE m.bucket_time >= p_from AND m.bucket_time <= p_to
               AND (p_hostname IS NULL OR m.hostname = p_hostname)
               AND (p_worker_id IS NULL OR m.worker_id = p_worker_id)
             GROUP BY 1
        ),
        workers AS (
            SELECT m.hostname, m.worker_id,
                   ROUND(AVG(m.avg_event_loop_lag_ms)) AS avg_loop_lag,
                   MAX(m.max_event_loop_lag_ms) AS max_loop_lag,
                   MIN(m.min_free_slots) AS free_slots,
                   MAX(m.db_connections) AS db_connections,
                   NULLIF(MAX(m.max_job_queue_size), 0) AS job_queue,
                   NULLIF(MAX(m.backoff_size), 0) AS backoff,
                   SUM(m.push_message_count + m.ack_message_count) AS messages,
                   MAX(m.bucket_time) AS last_seen
              FROM queen.worker_metrics m
             WHERE m.bucket_time >= now() - interval '5 minutes'
             GROUP BY m.hostname, m.worker_id
        ),
        queues AS (
            SELECT q.name AS queue_name,
                   SUM(m.pop_count) AS pops,
                   CASE WHEN SUM(m.pop_count) > 0
                        THEN ROUND(SUM(m.avg_lag_ms * m.pop_count)::numeric / SUM(m.pop_count)) END AS avg_lag,
                   CASE WHEN SUM(m.pop_count) > 0 THEN MAX(m.max_lag_ms) END AS max_lag
              FROM queen.queue_lag_metrics m
              JOIN queen.queues q ON q.id = m.queue_id
             WHERE m.bucket_time >= p_from AND m.bucket_time <= p_to
               AND (p_queue IS NULL OR q.name = p_queue)
             GROUP BY q.name
        )
        SELECT jsonb_build_object(
            'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
            'bucketMinutes', (SELECT minutes FROM width),
            'pointCount', (SELECT COUNT(*) FROM rolled),
            'timeSeries', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                               'timestamp', queen.obs_iso_v1(r.bucket),
                                               'pushMessages', r.push_msg,
                                               'popMessages', r.pop_msg,
                                               'ackMessages', r.ack_msg,
                                               'pushRequests', r.push_req,
                                               'popRequests', r.pop_req,
                                               'ackRequests', r.ack_req,
                                               'jobsDone', r.jobs,
                                               'pushPerSecond', ROUND(r.push_msg / (w.minutes * 60.0), 2),
                                               'popPerSecond', ROUND(r.pop_msg / (w.minutes * 60.0), 2),
                                               'ackPerSecond', ROUND(r.ack_msg / (w.minutes * 60.0), 2),
                                               'avgEventLoopLagMs', r.avg_loop_lag,
                                               'maxEventLoopLagMs', r.max_loop_lag,
                                               'avgFreeSlots', r.avg_free_slots,
                                               'minFreeSlots', r.min_free_slots,
                                               'dbConnections', r.db_connections,
                                               'avgJobQueueSize', r.avg_job_queue,
                                               'maxJobQueueSize', r.max_job_queue,
                                               'backoffSize', r.backoff,
                                               'avgLagMs', r.avg_lag,
                                               'maxLagMs', r.max_lag,
                                               'lagCount', r.lag_count,
                                               'dbErrors', r.db_errors,
                                               'ackSuccess', r.ack_ok,
                                               'ackFailed', r.ack_failed,
                                               'dlqCount', r.dlq) ORDER BY r.bucket DESC)
                                      FROM rolled r CROSS JOIN width w), '[]'::jsonb),
            'workers', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                            'hostname', k.hostname,
                                            'workerId', k.worker_id,
                                            'avgEventLoopLagMs', k.avg_loop_lag,
                                            'maxEventLoopLagMs', k.max_loop_lag,
                                            'freeSlots', k.free_slots,
                                            'dbConnections', k.db_connections,
                                            'jobQueueSize', k.job_queue,
                                            'backoffSize', k.backoff,
                                            'messagesProcessed', k.messages,
                                            'lastSeen', queen.obs_iso_v1(k.last_seen)) ORDER BY k.hostname, k.worker_id)
                                   FROM workers k), '[]'::jsonb),
            'queues', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                           'queueName', u.queue_name,
                                           'popCount', u.pops,
                                           'avgLagMs', u.avg_lag,
                                           'maxLagMs', u.max_lag) ORDER BY u.pops DESC, u.queue_name)
                                  FROM queues u), '[]'::jsonb),
            'summary', COALESCE((SELECT jsonb_build_object(
                                            'totalPushMessages', s.total_push_messages,
                                            'totalPopMessages', s.total_pop_messages,
                                            'totalAckMessages', s.total_ack_messages,
                                            'totalPushRequests', s.total_push_requests,
                                            'totalPopRequests', s.total_pop_requests,
                                            'totalAckRequests', s.total_ack_requests,
                                            'totalDbErrors', s.total_db_errors,
                                            'totalAckFailed', s.total_ack_failed,
                                            'totalDlq', s.total_dlq)
                                   FROM queen.worker_metrics_summary s
                                  WHERE s.id = 1), '{}'::jsonb))
    );
END;
$$;

-- =============================================================================
-- END OF ANALYTICS BLOCK
-- =============================================================================
