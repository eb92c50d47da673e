-- =============================================================================
-- 018_stats : readers of queen.stats for the status listing
-- (GET /api/v1/status/queues). The 'queue' rows are written by the stats
-- cycle; a queue it has not reached yet lists with zero counts. Readers only.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_status_queues_v2: one page of the tenant's queues, newest first,
-- optionally narrowed to one queue name / namespace / task:
-- {queues:[{id, name, namespace, task, createdAt, partitions,
-- messages:{total, pending, processing, completed, deadLetter}}],
-- pagination:{limit, offset}}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_status_queues_v2(
    p_tenant uuid, p_queue text, p_namespace text, p_task text, p_limit integer, p_offset integer)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH page AS (
        SELECT q.id, q.name, q.namespace, q.task, q.created_at,
               COALESCE(s.child_count, 0) AS partitions,
               COALESCE(s.total_messages, 0) AS total,
               COALESCE(s.pending_messages, 0) AS pending,
               COALESCE(s.processing_messages, 0) AS processing,
               COALESCE(s.completed_messages, 0) AS completed,
               COALESCE(s.dead_letter_messages, 0) AS dead_letter
          FROM queen.queues q
          LEFT JOIN queen.stats s ON s.stat_type = 'queue' AND s.queue_id = q.id
         WHERE q.tenant_id = p_tenant
           AND (p_queue IS NULL OR q.name = p_queue)
           AND (p_namespace IS NULL OR q.namespace = p_namespace)
           AND (p_task IS NULL OR q.task = p_task)
         ORDER BY q.created_at DESC, q.name
         LIMIT p_limit OFFSET p_offset
    )
    SELECT jsonb_build_object(
        'queues', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                       'id', p.id,
                                       'name', p.name,
                                       'namespace', p.namespace,
                                       'task', p.task,
                                       'createdAt', queen.obs_iso_v1(p.created_at),
                                       'partitions', p.partitions,
                                       'messages', jsonb_build_object(
                                           'total', p.total,
                                           'pending', p.pending,
                                           'processing', p.processing,
                                           'completed', p.completed,
                                           'deadLetter', p.dead_letter)) ORDER BY p.created_at DESC, p.name)
                              FROM page p), '[]'::jsonb),
        'pagination', jsonb_build_object('limit', p_limit, 'offset', p_offset))
$$;
