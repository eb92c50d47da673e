-- =============================================================================
-- 016_messages : message browsing (broker/DESIGN.md, Management plane): the
-- listing, the single-message read and the status they share.
--
-- SQL cannot open a segment blob, so the per-frame facts it has are the hash
-- sidecar rows (queen.log_txns: one 16-byte hash per frame) and the cursors.
-- The listing therefore covers the frames whose log_txns row survives; the
-- broker decodes each listed frame from its segment, addressed by
-- (partition_id, base_offset, frame index). Deleting dead letters and the
-- replay are 010_log_admin's. Everything is read-only and tenant-scoped
-- through log_partitions -> queues.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.message_status_v1: where one frame stands. dead_letter when a dead
-- letter was filed at its offset; completed when every named group of the
-- partition committed past it, or, with no named group, the queue-mode cursor
-- did; processing when a live lease covers it; else pending. consumed_by and
-- total_groups count the named groups (busStatus); lease_expires_at is the
-- latest live lease covering the frame.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_status_v1(p_partition_id uuid, p_offset bigint)
RETURNS TABLE (status text, consumed_by integer, total_groups integer, lease_expires_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT CASE
               WHEN EXISTS (SELECT 1 FROM queen.log_dlq d
                             WHERE d.partition_id = p_partition_id AND d."offset" = p_offset)
                   THEN 'dead_letter'
               WHEN g.named > 0 AND g.named_passed = g.named THEN 'completed'
               WHEN g.named = 0 AND g.queue_mode_passed THEN 'completed'
               WHEN g.lease_until IS NOT NULL THEN 'processing'
               ELSE 'pending'
           END,
           g.named_passed, g.named, g.lease_until
      FROM (SELECT count(*) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__')::integer AS named,
                   count(*) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__'
                                      AND c.committed >= p_offset)::integer AS named_passed,
                   COALESCE(bool_or(c.consumer_group = '__QUEUE_MODE__' AND c.committed >= p_offset), false)
                       AS queue_mode_passed,
                   max(c.lease_expires_at) FILTER (WHERE c.lease_expires_at > now()
                                                     AND c.committed < p_offset
                                                     AND c.batch_end >= p_offset) AS lease_until
              FROM queen.log_consumers c
             WHERE c.partition_id = p_partition_id) g
$$;

-- -----------------------------------------------------------------------------
-- queen.messages_frames_v1: the tenant's frames created from p_from (default
-- an hour ago) up to the end of p_to's minute (default now's), optionally
-- narrowed by queue, partition, namespace and task (NULL = any). The database
-- clock decides "now", as it stamps the segments. frame_idx is the frame's
-- index in its segment (offset - base_offset).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.messages_frames_v1(
    p_tenant uuid, p_queue text, p_partition text, p_namespace text, p_task text,
    p_from timestamptz, p_to timestamptz)
RETURNS TABLE (partition_id uuid, queue_name text, partition_name text, namespace text, task text,
               base_offset bigint, frame_idx integer, txn_hash bytea, created_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT t.partition_id, q.name::text, p.name, q.namespace::text, q.task::text, t.base_offset, h.idx, h.hash,
           t.created_at
      FROM queen.log_txns t
      JOIN queen.log_partitions p ON p.id = t.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) h
     WHERE q.tenant_id = p_tenant
       AND t.created_at >= COALESCE(p_from, now() - interval '1 hour')
       AND t.created_at < date_trunc('minute', COALESCE(p_to, now())) + interval '1 minute'
       AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_partition IS NULL OR p.name = p_partition)
       AND (p_namespace IS NULL OR q.namespace = p_namespace)
       AND (p_task IS NULL OR q.task = p_task)
$$;

-- -----------------------------------------------------------------------------
-- queen.messages_list_v1: one page of messages_frames_v1, newest first, with
-- each frame's status, optionally narrowed to one status. Without a status
-- filter the page is cut first and only its frames are priced; with one,
-- every frame in the window is, since the filter needs it.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.messages_list_v1(
    p_tenant uuid, p_queue text, p_partition text, p_namespace text, p_task text, p_status text,
    p_from timestamptz, p_to timestamptz, p_limit integer, p_offset integer)
RETURNS TABLE (partition_id uuid, queue_name text, partition_name text, namespace text, task text,
               base_offset bigint, frame_idx integer, txn_hash bytea, created_at timestamptz, status text,
               consumed_by integer, total_groups integer, lease_expires_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_status IS NULL THEN
        RETURN QUERY
        SELECT f.partition_id, f.queue_name, f.partition_name, f.namespace, f.task, f.base_offset, f.frame_idx,
               f.txn_hash, f.created_at, s.status, s.consumed_by, s.total_groups, s.lease_expires_at
          FROM (SELECT * FROM queen.messages_frames_v1(p_tenant, p_queue, p_partition, p_namespace, p_task,
                                                        p_from, p_to) w
                 ORDER BY w.created_at DESC, w.base_offset + w.frame_idx DESC, w.partition_id
                 LIMIT p_limit OFFSET p_offset) f
         CROSS JOIN LATERAL queen.message_status_v1(f.partition_id, f.base_offset + f.frame_idx) s
         ORDER BY f.created_at DESC, f.base_offset + f.frame_idx DESC, f.partition_id;
    ELSE
        RETURN QUERY
        SELECT f.partition_id, f.queue_name, f.partition_name, f.namespace, f.task, f.base_offset, f.frame_idx,
               f.txn_hash, f.created_at, s.status, s.consumed_by, s.total_groups, s.lease_expires_at
          FROM queen.messages_frames_v1(p_tenant, p_queue, p_partition, p_namespace, p_task, p_from, p_to) f
         CROSS JOIN LATERAL queen.message_status_v1(f.partition_id, f.base_offset + f.frame_idx) s
         WHERE s.status = p_status
         ORDER BY f.created_at DESC, f.base_offset + f.frame_idx DESC, f.partition_id
         LIMIT p_limit OFFSET p_offset;
    END IF;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.messages_mode_v1: how the tenant's matching partitions are consumed:
-- by queue mode, by named groups, or both (the listing's "mode").
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.messages_mode_v1(p_tenant uuid, p_queue text, p_partition text)
RETURNS TABLE (has_queue_mode boolean, named_groups integer)
LANGUAGE sql STABLE AS $$
    SELECT COALESCE(bool_or(c.consumer_group = '__QUEUE_MODE__'), false),
           (count(DISTINCT c.consumer_group) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__'))::integer
      FROM queen.log_consumers c
      JOIN queen.log_partitions p ON p.id = c.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
       AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_partition IS NULL OR p.name = p_partition)
$$;

-- -----------------------------------------------------------------------------
-- queen.message_segments_v1: the named segments of one partition of the
-- tenant, for decoding a listed page (each segment fetched once).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_segments_v1(p_tenant uuid, p_partition_id uuid, p_base_offsets bigint[])
RETURNS TABLE (base_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE AS $$
    SELECT s.base_offset, s.created_at, s.blob
      FROM queen.log_segments s
      JOIN queen.log_partitions p ON p.id = s.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant AND s.partition_id = p_partition_id
       AND s.base_offset = ANY (p_base_offsets)
$$;

-- -----------------------------------------------------------------------------
-- queen.message_locate_v1: the newest offset of a tenant partition whose
-- stored transaction hash is p_hash (the broker hashes, SQL never does), or no
-- row when the hash is unknown or its log_txns row was purged.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_locate_v1(p_tenant uuid, p_partition_id uuid, p_hash bytea)
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT t.base_offset + h.idx
      FROM queen.log_txns t
      JOIN queen.log_partitions p ON p.id = t.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) h
     WHERE q.tenant_id = p_tenant AND t.partition_id = p_partition_id AND h.hash = p_hash
     ORDER BY 1 DESC
     LIMIT 1
$$;

-- -----------------------------------------------------------------------------
-- queen.message_segment_covering_v1: the segment of a tenant partition that
-- holds p_offset; no row when retention removed it.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_segment_covering_v1(p_tenant uuid, p_partition_id uuid, p_offset bigint)
RETURNS TABLE (base_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE AS $$
    SELECT s.base_offset, s.created_at, s.blob
      FROM (SELECT s0.base_offset, s0.end_offset, s0.created_at, s0.blob
              FROM queen.log_segments s0
             WHERE s0.partition_id = p_partition_id AND s0.base_offset <= p_offset
             ORDER BY s0.base_offset DESC
             LIMIT 1) s
     WHERE s.end_offset >= p_offset
       AND EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                    WHERE p.id = p_partition_id AND q.tenant_id = p_tenant)
$$;

-- -----------------------------------------------------------------------------
-- queen.message_segments_before_v1: up to p_limit segments of a tenant
-- partition, newest first, below p_before (NULL = below txns_start, the first
-- offset whose hash row survives; a hash lookup already covered the rest).
-- The single-message read falls back to this scan once hash rows are purged.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_segments_before_v1(
    p_tenant uuid, p_partition_id uuid, p_before bigint, p_limit integer)
RETURNS TABLE (base_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE AS $$
    SELECT s.base_offset, s.created_at, s.blob
      FROM queen.log_partitions p
      JOIN queen.queues q ON q.id = p.queue_id
      JOIN queen.log_segments s ON s.partition_id = p.id
     WHERE p.id = p_partition_id AND q.tenant_id = p_tenant
       AND s.base_offset < COALESCE(p_before, p.txns_start)
     ORDER BY s.base_offset DESC
     LIMIT p_limit
$$;

-- -----------------------------------------------------------------------------
-- queen.message_detail_v1: the management detail of the frame at p_offset of a
-- tenant partition: where it lives, its queue's configuration, its status and
-- the dead letter filed for it, if any. No row when the partition is not the
-- tenant's.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_detail_v1(p_tenant uuid, p_partition_id uuid, p_offset bigint)
RETURNS TABLE (queue_name text, partition_name text, namespace text, task text, lease_time integer,
               retry_limit integer, retry_delay integer, ttl integer, priority integer, status text,
               error_message text, dlq_retry_count integer, has_queue_mode boolean, named_groups integer,
               queue_mode_lease_expires_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT q.name::text, p.name, q.namespace::text, q.task::text,
           COALESCE(q.lease_time, 60), COALESCE(q.retry_limit, 3), COALESCE(q.retry_delay, 1000),
           COALESCE(q.ttl, 3600), COALESCE(q.priority, 0),
           s.status, d.error, COALESCE(d.retry_count, 0),
           EXISTS (SELECT 1 FROM queen.log_consumers c
                    WHERE c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__'),
           s.total_groups,
           (SELECT c.lease_expires_at FROM queen.log_consumers c
             WHERE c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__')
      FROM queen.log_partitions p
      JOIN queen.queues q ON q.id = p.queue_id
     CROSS JOIN LATERAL queen.message_status_v1(p.id, p_offset) s
      LEFT JOIN LATERAL (SELECT dl.error, dl.retry_count FROM queen.log_dlq dl
                          WHERE dl.partition_id = p.id AND dl."offset" = p_offset
                          ORDER BY dl.failed_at DESC
                          LIMIT 1) d ON true
     WHERE p.id = p_partition_id AND q.tenant_id = p_tenant
$$;

-- -----------------------------------------------------------------------------
-- queen.message_groups_v1: each cursor of a tenant partition and whether it
-- has consumed the frame at p_offset.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.message_groups_v1(p_tenant uuid, p_partition_id uuid, p_offset bigint)
RETURNS TABLE (consumer_group text, consumed boolean, lease_expires_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT c.consumer_group, c.committed >= p_offset, c.lease_expires_at
      FROM queen.log_consumers c
      JOIN queen.log_partitions p ON p.id = c.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE c.partition_id = p_partition_id AND q.tenant_id = p_tenant
     ORDER BY c.consumer_group
$$;
