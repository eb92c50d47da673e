-- =============================================================================
-- 015_status : readers behind GET /api/v1/status (the dashboard's cell-wide
-- summary) and GET /api/v1/analytics/system-metrics. Both are cell-wide by
-- contract, as in the reference broker (broker/DESIGN.md, Tenancy): no tenant
-- parameter.
--
-- They read what the per-replica metrics collector and the stats cycle
-- wrote (worker_metrics, worker_metrics_summary, queue_lag_metrics,
-- system_metrics, stats) plus the live lease and dead-letter tables; an empty
-- metrics table reads as an empty series, never as an error. Readers only.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_status_v3: the /api/v1/status body.
--   throughput[]: one point per bucket that saw traffic, newest first. With a
--     queue / namespace / task filter the message counts come from the
--     per-queue minute counters (queue_lag_metrics, across tenants, as the
--     route is cell-wide); without, from the per-replica worker counters. The
--     process-health columns (event-loop lag, free slots, DB errors, CPU, RSS,
--     pool) are always cell-wide, so a queue's dip can be told apart from a
--     broker-wide one.
--   queues[]: queues whose stats row holds messages; messages / errors /
--     deadLetterQueue.totalMessages: lifetime counters of the summary row;
--     pending / processing: the latest stats refresh; leases and the current
--     dead-letter figures: live.
--   statsAge: seconds since the summary row last moved, -1 when never.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_status_v3(
    p_from timestamptz, p_to timestamptz, p_queue text, p_namespace text, p_task text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_minutes integer := queen.obs_bucket_minutes_v1(p_from, p_to);
    v_seconds numeric := queen.obs_bucket_minutes_v1(p_from, p_to) * 60;
    v_scoped boolean := p_queue IS NOT NULL OR p_namespace IS NOT NULL OR p_task IS NOT NULL;
    -- record, not %ROWTYPE: worker_metrics_summary is created by 019, after this file.
    v_summary record;
    v_throughput jsonb;
    v_points integer;
    v_queues jsonb;
    v_workers jsonb;
    v_leases jsonb;
    v_pending bigint;
    v_processing bigint;
    v_dlq_now bigint;
    v_dlq_partitions bigint;
    v_dlq_errors jsonb;
BEGIN
    WITH traffic AS (
        SELECT queen.obs_bucket_v1(w.bucket_time, v_minutes) AS bucket,
               SUM(w.push_message_count) AS pushed,
               SUM(w.pop_message_count) AS popped,
               SUM(w.ack_message_count) AS acked,
               SUM(w.ack_failed_count) AS ack_failed,
               CASE WHEN SUM(w.lag_count) > 0
                    THEN ROUND(SUM(w.avg_lag_ms * w.lag_count)::numeric / SUM(w.lag_count)) ELSE 0 END AS avg_lag,
               MAX(w.max_lag_ms) AS max_lag
          FROM queen.worker_metrics w
         WHERE NOT v_scoped AND w.bucket_time >= p_from AND w.bucket_time <= p_to
         GROUP BY 1
        UNION ALL
        SELECT queen.obs_bucket_v1(m.bucket_time, v_minutes),
               SUM(m.push_message_count),
               SUM(m.pop_count),
               SUM(m.ack_success_count + m.ack_failed_count),
               SUM(m.ack_failed_count),
               CASE WHEN SUM(m.pop_count) > 0
                    THEN ROUND(SUM(m.avg_lag_ms * m.pop_count)::numeric / SUM(m.pop_count)) ELSE 0 END,
               MAX(m.max_lag_ms)
          FROM queen.queue_lag_metrics m
          JOIN queen.queues q ON q.id = m.queue_id
         WHERE v_scoped AND m.bucket_time >= p_from AND m.bucket_time <= p_to
           AND (p_queue IS NULL OR q.name = p_queue)
           AND (p_namespace IS NULL OR q.namespace = p_namespace)
           AND (p_task IS NULL OR q.task = p_task)
         GROUP BY 1
    ),
    health AS (
        SELECT queen.obs_bucket_v1(w.bucket_time, v_minutes) AS bucket,
               ROUND(AVG(w.avg_event_loop_lag_ms)) AS avg_loop_lag,
               MAX(w.max_event_loop_lag_ms) AS max_loop_lag,
               MIN(w.min_free_slots) AS min_free_slots,
               SUM(w.db_error_count) AS db_errors,
               SUM(w.dlq_count) AS dlq
          FROM queen.worker_metrics w
         WHERE w.bucket_time >= p_from AND w.bucket_time <= p_to
         GROUP BY 1
    ),
    host AS (
        SELECT queen.obs_bucket_v1(s."timestamp", v_minutes) AS bucket,
               AVG(queen.obs_leaf_v1(s.metrics #> '{cpu,user_us}', 'avg')) / 100.0 AS cpu_user_pct,
               AVG(queen.obs_leaf_v1(s.metrics #> '{cpu,system_us}', 'avg')) / 100.0 AS cpu_sys_pct,
               AVG(queen.obs_leaf_v1(s.metrics #> '{memory,rss_bytes}', 'avg')) / 1048576.0 AS rss_mb,
               AVG(queen.obs_leaf_v1(s.metrics #> '{database,pool_active}', 'avg')) AS pool_active,
               AVG(queen.obs_leaf_v1(s.metrics #> '{database,pool_idle}', 'avg')) AS pool_idle,
               AVG(queen.obs_leaf_v1(s.metrics #> '{database,pool_size}', 'avg')) AS pool_size
          FROM queen.system_metrics s
         WHERE s."timestamp" >= p_from AND s."timestamp" <= p_to
         GROUP BY 1
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'timestamp', queen.obs_iso_v1(t.bucket),
               'ingested', t.pushed,
               'processed', t.acked,
               'popMessages', t.popped,
               'ingestedPerSecond', ROUND(t.pushed / v_seconds, 2),
               'processedPerSecond', ROUND(t.acked / v_seconds, 2),
               'popPerSecond', ROUND(t.popped / v_seconds, 2),
               'avgLagMs', t.avg_lag,
               'maxLagMs', t.max_lag,
               'avgEventLoopLagMs', h.avg_loop_lag,
               'maxEventLoopLagMs', h.max_loop_lag,
               'minFreeSlots', h.min_free_slots,
               'dbErrors', h.db_errors,
               'ackFailed', t.ack_failed,
               'dlqCount', h.dlq,
               'queenCpuUserPct', ROUND(x.cpu_user_pct, 2),
               'queenCpuSysPct', ROUND(x.cpu_sys_pct, 2),
               'queenRssMb', ROUND(x.rss_mb, 1),
               'dbPoolActive', ROUND(x.pool_active, 1),
               'dbPoolIdle', ROUND(x.pool_idle, 1),
               'dbPoolSize', ROUND(x.pool_size, 1)) ORDER BY t.bucket DESC), '[]'::jsonb),
           COUNT(*)
      INTO v_throughput, v_points
      FROM traffic t
      LEFT JOIN health h ON h.bucket = t.bucket
      LEFT JOIN host x ON x.bucket = t.bucket;

    -- Replicas seen in the last two minutes, one entry per (hostname, worker).
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'hostname', r.hostname,
               'workerId', r.worker_id,
               'avgEventLoopLagMs', r.avg_loop_lag,
               'maxEventLoopLagMs', r.max_loop_lag,
               'freeSlots', r.free_slots,
               'dbConnections', r.db_connections,
               'jobQueueSize', r.job_queue,
               'messagesProcessed', r.messages) ORDER BY r.hostname, r.worker_id), '[]'::jsonb)
      INTO v_workers
      FROM (SELECT w.hostname, w.worker_id,
                   ROUND(AVG(w.avg_event_loop_lag_ms)) AS avg_loop_lag,
                   MAX(w.max_event_loop_lag_ms) AS max_loop_lag,
                   MIN(w.min_free_slots) AS free_slots,
                   MAX(w.db_connections) AS db_connections,
                   -- No job queue in this broker: unmeasured is null, not a reassuring 0.
                   NULLIF(MAX(w.max_job_queue_size), 0) AS job_queue,
                   SUM(w.push_message_count + w.ack_message_count) AS messages
              FROM queen.worker_metrics w
             WHERE w.bucket_time >= now() - interval '2 minutes'
             GROUP BY w.hostname, w.worker_id) r;

    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'id', q.id,
               'name', q.name,
               'namespace', q.namespace,
               'task', q.task,
               'partitions', COALESCE(s.child_count, 0),
               'totalConsumed', COALESCE(s.completed_messages, 0)) ORDER BY q.name, q.id), '[]'::jsonb)
      INTO v_queues
      FROM queen.queues q
      JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = q.id
     WHERE s.total_messages > 0
       AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_namespace IS NULL OR q.namespace = p_namespace)
       AND (p_task IS NULL OR q.task = p_task);

    SELECT * INTO v_summary FROM queen.worker_metrics_summary WHERE id = 1;

    SELECT COALESCE(SUM(s.pending_messages), 0), COALESCE(SUM(s.processing_messages), 0)
      INTO v_pending, v_processing
      FROM queen.stats s
     WHERE s.stat_type = 'queue';

    SELECT jsonb_build_object(
               'active', COUNT(*),
               'partitionsWithLeases', COUNT(DISTINCT c.partition_id),
               'totalBatchSize', COALESCE(SUM(GREATEST(COALESCE(c.batch_end, c.committed) - c.committed, 0)), 0),
               -- A lease covers (committed, batch_end]; no per-lease ack count is kept.
               'totalAcked', 0)
      INTO v_leases
      FROM queen.log_consumers c
     WHERE c.lease_expires_at > now();

    SELECT COUNT(*), COUNT(DISTINCT d.partition_id) INTO v_dlq_now, v_dlq_partitions FROM queen.log_dlq d;

    SELECT COALESCE(jsonb_agg(jsonb_build_object('error', e.error, 'count', e.n) ORDER BY e.n DESC, e.error), '[]'::jsonb)
      INTO v_dlq_errors
      FROM (SELECT COALESCE(d.error, 'unknown') AS error, COUNT(*) AS n
              FROM queen.log_dlq d
             GROUP BY 1
             ORDER BY 2 DESC, 1
             LIMIT 5) e;

    RETURN jsonb_build_object(
        'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
        'bucketMinutes', v_minutes,
        'pointCount', v_points,
        'throughput', v_throughput,
        'queues', v_queues,
        'messages', jsonb_build_object(
            'total', COALESCE(v_summary.total_push_messages, 0),
            'pending', GREATEST(v_pending - v_processing, 0),
            'processing', v_processing,
            'completed', COALESCE(v_summary.total_ack_success, 0),
            'failed', COALESCE(v_summary.total_ack_failed, 0),
            'deadLetter', COALESCE(v_summary.total_dlq, 0),
            'requests', jsonb_build_object(
                'push', COALESCE(v_summary.total_push_requests, 0),
                'pop', COALESCE(v_summary.total_pop_requests, 0),
                'ack', COALESCE(v_summary.total_ack_requests, 0)),
            'batchEfficiency', jsonb_build_object(
                'push', COALESCE(ROUND(v_summary.total_push_messages::numeric / NULLIF(v_summary.total_push_requests, 0), 2), 0),
                'pop', COALESCE(ROUND(v_summary.total_pop_messages::numeric / NULLIF(v_summary.total_pop_requests, 0), 2), 0),
                'ack', COALESCE(ROUND(v_summary.total_ack_messages::numeric / NULLIF(v_summary.total_ack_requests, 0), 2), 0))),
        'leases', v_leases,
        'deadLetterQueue', jsonb_build_object(
            'totalMessages', COALESCE(v_summary.total_dlq, 0),
            'currentMessages', v_dlq_now,
            'affectedPartitions', v_dlq_partitions,
            'topErrors', v_dlq_errors),
        'workers', v_workers,
        'errors', jsonb_build_object(
            'dbErrors', COALESCE(v_summary.total_db_errors, 0),
            'ackFailed', COALESCE(v_summary.total_ack_failed, 0),
            'dlqMessages', COALESCE(v_summary.total_dlq, 0)),
        'statsAge', COALESCE(EXTRACT(EPOCH FROM (now() - v_summary.last_updated_at))::integer, -1));
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.get_system_metrics_v1: GET /api/v1/analytics/system-metrics, the
-- per-replica process samples re-bucketed to the window's width:
-- {timeRange, replicas:[{hostname, port, workerId, timeSeries:[{timestamp,
-- sampleCount, metrics}]}], replicaCount, bucketMinutes, pointCount}.
-- Every numeric leaf of metrics is {avg, min, max, last}: avg weighted by the
-- samples each row stands for, last = the newest row's value. cpu.*_us is
-- percent x 100. This broker has no thread pools or shared-state sidecar, so
-- threadpool is null and shared_state is {enabled:false}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_system_metrics_v1(
    p_from timestamptz, p_to timestamptz, p_hostname text, p_worker_id text)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH width AS (
        SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
    ),
    samples AS (
        SELECT queen.obs_bucket_v1(s."timestamp", w.minutes) AS bucket,
               s.hostname, s.port, s.worker_id, s."timestamp" AS at, s.sample_count, s.metrics
          FROM queen.system_metrics s, width w
         WHERE s."timestamp" >= p_from AND s."timestamp" <= p_to
           AND (p_hostname IS NULL OR s.hostname = p_hostname)
           AND (p_worker_id IS NULL OR s.worker_id = p_worker_id)
    ),
    leaves (block, leaf) AS (
        VALUES ('cpu', 'user_us'), ('cpu', 'system_us'),
               ('memory', 'rss_bytes'), ('memory', 'virtual_bytes'),
               ('database', 'pool_size'), ('database', 'pool_idle'), ('database', 'pool_active'),
               ('', 'uptime_seconds')
    ),
    leaf_stats AS (
        SELECT s.bucket, s.hostname, s.port, s.worker_id, l.block, l.leaf,
               SUM(s.sample_count) AS samples,
               jsonb_build_object(
                   'avg', SUM(queen.obs_leaf_v1(v.x, 'avg') * s.sample_count)
                          / NULLIF(SUM(s.sample_count) FILTER (WHERE queen.obs_leaf_v1(v.x, 'avg') IS NOT NULL), 0),
                   'min', MIN(queen.obs_leaf_v1(v.x, 'min')),
                   'max', MAX(queen.obs_leaf_v1(v.x, 'max')),
                   'last', (array_agg(queen.obs_leaf_v1(v.x, 'last') ORDER BY s.at DESC)
                                FILTER (WHERE queen.obs_leaf_v1(v.x, 'last') IS NOT NULL))[1]) AS stat
          FROM samples s
         CROSS JOIN leaves l
         CROSS JOIN LATERAL (SELECT CASE WHEN l.block = '' THEN s.metrics -> l.leaf
                                         ELSE s.metrics -> l.block -> l.leaf END AS x) v
         GROUP BY s.bucket, s.hostname, s.port, s.worker_id, l.block, l.leaf
    ),
    points AS (
        SELECT ls.bucket, ls.hostname, ls.port, ls.worker_id,
               MAX(ls.samples) AS samples,
               jsonb_build_object(
                   'cpu', jsonb_object_agg(ls.leaf, ls.stat) FILTER (WHERE ls.block = 'cpu'),
                   'memory', jsonb_object_agg(ls.leaf, ls.stat) FILTER (WHERE ls.block = 'memory'),
                   'database', jsonb_object_agg(ls.leaf, ls.stat) FILTER (WHERE ls.block = 'database'),
                   'uptime_seconds', (jsonb_agg(ls.stat) FILTER (WHERE ls.leaf = 'uptime_seconds')) -> 0,
                   'threadpool', NULL,
                   'shared_state', jsonb_build_object('enabled', false)) AS metrics
          FROM leaf_stats ls
         GROUP BY ls.bucket, ls.hostname, ls.port, ls.worker_id
    ),
    replicas AS (
        SELECT p.hostname, p.port, p.worker_id,
               jsonb_agg(jsonb_build_object(
                   'timestamp', queen.obs_iso_v1(p.bucket),
                   'sampleCount', p.samples,
                   'metrics', p.metrics) ORDER BY p.bucket) AS series
          FROM points p
         GROUP BY p.hostname, p.port, p.worker_id
    )
    SELECT jsonb_build_object(
        'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
        'replicas', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                         'hostname', r.hostname,
                                         'port', r.port,
                                         'workerId', r.worker_id,
                                         'timeSeries', r.series) ORDER BY r.hostname, r.port, r.worker_id)
                                FROM replicas r), '[]'::jsonb),
        'replicaCount', (SELECT COUNT(*) FROM replicas),
        'bucketMinutes', (SELECT minutes FROM width),
        'pointCount', (SELECT COUNT(*) FROM points))
$$;
