-- =============================================================================
-- 022_retention_analytics : GET /api/v1/analytics/retention, what retention,
-- completed retention and max-wait eviction removed per bucket, from the
-- queen.retention_history audit the maintenance cycle writes. Read only.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_retention_timeseries_v1: {timeRange, bucketMinutes,
-- series:[{bucket, retentionMsgs, completedRetentionMsgs, evictionMsgs,
-- totalMsgs, eventCount}] oldest first, totals:{same keys}}.
-- An audit row belongs to a tenant through its partition; a row whose
-- partition was since reclaimed cannot be attributed and is left out, so one
-- tenant never sees another's history. totalMsgs counts every step type;
-- markers named __like_this__ are not deletions and are skipped.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_retention_timeseries_v1(
    p_tenant uuid, p_from timestamptz, p_to timestamptz, p_queue text)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH width AS (
        SELECT queen.obs_bucket_minutes_v1(p_from, p_to) AS minutes
    ),
    steps AS (
        SELECT queen.obs_bucket_v1(h.executed_at, w.minutes) AS bucket,
               h.retention_type,
               COALESCE(h.messages_deleted, 0)::bigint AS deleted
          FROM queen.retention_history h
          JOIN queen.log_partitions p ON p.id = h.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         CROSS JOIN width w
         WHERE q.tenant_id = p_tenant
           AND (p_queue IS NULL OR q.name = p_queue)
           AND h.executed_at >= p_from AND h.executed_at <= p_to
           AND h.retention_type NOT LIKE '\_\_%\_\_' ESCAPE '\'
    ),
    grouped AS (
        SELECT bucket,
               SUM(deleted) FILTER (WHERE retention_type = 'retention') AS retention,
               SUM(deleted) FILTER (WHERE retention_type = 'completed_retention') AS completed,
               SUM(deleted) FILTER (WHERE retention_type = 'max_wait_time_eviction') AS eviction,
               SUM(deleted) AS total,
               COUNT(*) AS events
          FROM steps
         GROUP BY bucket
    )
    SELECT jsonb_build_object(
        'timeRange', jsonb_build_object('from', queen.obs_iso_v1(p_from), 'to', queen.obs_iso_v1(p_to)),
        'bucketMinutes', (SELECT minutes FROM width),
        'series', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                       'bucket', queen.obs_iso_v1(g.bucket),
                                       'retentionMsgs', COALESCE(g.retention, 0),
                                       'completedRetentionMsgs', COALESCE(g.completed, 0),
                                       'evictionMsgs', COALESCE(g.eviction, 0),
                                       'totalMsgs', g.total,
                                       'eventCount', g.events) ORDER BY g.bucket)
                              FROM grouped g), '[]'::jsonb),
        'totals', (SELECT jsonb_build_object(
                              'retentionMsgs', COALESCE(SUM(g.retention), 0),
                              'completedRetentionMsgs', COALESCE(SUM(g.completed), 0),
                              'evictionMsgs', COALESCE(SUM(g.eviction), 0),
                              'totalMsgs', COALESCE(SUM(g.total), 0),
                              'eventCount', COALESCE(SUM(g.events), 0))
                     FROM grouped g))
$$;
