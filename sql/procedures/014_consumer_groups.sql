-- =============================================================================
-- 014_consumer_groups : the consumer-group management readers and the group
-- delete (broker/DESIGN.md, Management plane).
--
-- A group's state is its cursor rows in queen.log_consumers, one per
-- (partition, group). Lag is pure offset arithmetic: a cursor's pending count
-- is GREATEST(last_offset - GREATEST(committed, log_start - 1), 0), since
-- frames retention already removed are not lag. The time lag is the age of
-- the oldest unconsumed segment, found by two primary-key probes.
--
-- Every function is scoped to one tenant through log_partitions -> queues. The
-- delete locks the cursor rows it removes in (partition_id, consumer_group)
-- order (broker/DESIGN.md, Lock order) and never locks a partition row.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.log_oldest_unconsumed_at_v1: created_at of the first segment holding an
-- offset above p_after, or NULL when there is none. Segments append in offset
-- order, so that is the segment covering p_after + 1 or, when retention left a
-- gap there, the first one after it. The inner probe pins the scan start so a
-- cursor never walks its consumed prefix.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_oldest_unconsumed_at_v1(p_partition_id uuid, p_after bigint)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT s.created_at
      FROM queen.log_segments s
     WHERE s.partition_id = p_partition_id
       AND s.base_offset >= COALESCE((SELECT max(c.base_offset)
                                        FROM queen.log_segments c
                                       WHERE c.partition_id = p_partition_id
                                         AND c.base_offset <= p_after + 1), 0)
       AND s.end_offset > p_after
     ORDER BY s.base_offset
     LIMIT 1
$$;

-- -----------------------------------------------------------------------------
-- queen.consumer_group_cursors_v1: every cursor of the tenant with its lag, the
-- common input of the three readers below. p_group NULL = every group. A
-- caught-up cursor provably has no unconsumed segment, so the segment probe
-- only runs for cursors with something pending.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.consumer_group_cursors_v1(p_tenant uuid, p_group text)
RETURNS TABLE (consumer_group text, queue_id uuid, queue_name text, partition_id uuid, partition_name text,
               worker_id text, total_consumed bigint, pending bigint, oldest_unconsumed_at timestamptz,
               lease_expires_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT c.consumer_group, q.id, q.name::text, p.id, p.name, c.worker_id, c.total_consumed,
           GREATEST(p.last_offset - GREATEST(c.committed, p.log_start - 1), 0),
           CASE WHEN p.last_offset > GREATEST(c.committed, p.log_start - 1)
                THEN queen.log_oldest_unconsumed_at_v1(p.id, GREATEST(c.committed, p.log_start - 1)) END,
           c.lease_expires_at
      FROM queen.log_consumers c
      JOIN queen.log_partitions p ON p.id = c.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
       AND (p_group IS NULL OR c.consumer_group = p_group)
$$;

-- -----------------------------------------------------------------------------
-- queen.consumer_groups_list_v1: one row per (group, queue) of the tenant, with
-- the queue-scoped subscription record when the group registered one. The
-- state (Stable / Lagging / Dead) is decided by the broker from these columns.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.consumer_groups_list_v1(p_tenant uuid)
RETURNS TABLE (consumer_group text, queue_name text, cursors integer, partitions_with_lag integer,
               total_lag bigint, max_time_lag_seconds integer, max_total_consumed bigint,
               subscription_mode text, subscription_timestamp timestamptz, subscription_created_at timestamptz,
               conflation boolean)
LANGUAGE sql STABLE AS $$
    WITH per_queue AS (
        SELECT k.consumer_group, k.queue_id, k.queue_name,
               count(*)::integer AS cursors,
               count(*) FILTER (WHERE k.pending > 0)::integer AS partitions_with_lag,
               sum(k.pending)::bigint AS total_lag,
               COALESCE(max(EXTRACT(EPOCH FROM (now() - k.oldest_unconsumed_at)))::integer, 0) AS max_time_lag,
               max(k.total_consumed) AS max_total_consumed
          FROM queen.consumer_group_cursors_v1(p_tenant, NULL) k
         GROUP BY k.consumer_group, k.queue_id, k.queue_name
    )
    SELECT g.consumer_group, g.queue_name, g.cursors, g.partitions_with_lag, g.total_lag, g.max_time_lag,
           g.max_total_consumed, m.subscription_mode, m.subscription_timestamp, m.created_at,
           COALESCE(m.conflation, false)
      FROM per_queue g
      LEFT JOIN queen.consumer_groups_metadata m
             ON m.tenant_id = p_tenant AND m.queue_id = g.queue_id
            AND m.consumer_group = g.consumer_group AND m.partition_name = ''
            AND m.namespace = '' AND m.task = ''
     ORDER BY g.consumer_group, g.queue_name
$$;

-- -----------------------------------------------------------------------------
-- queen.consumer_groups_lagging_v1: the tenant's cursors whose oldest
-- unconsumed segment is more than p_min_lag_seconds old, most lagging first.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.consumer_groups_lagging_v1(p_tenant uuid, p_min_lag_seconds integer)
RETURNS TABLE (consumer_group text, queue_name text, partition_name text, partition_id uuid, worker_id text,
               offset_lag bigint, time_lag_seconds integer, oldest_unconsumed_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT l.consumer_group, l.queue_name, l.partition_name, l.partition_id, l.worker_id, l.pending,
           l.lag_seconds, l.oldest_unconsumed_at
      FROM (SELECT k.*, EXTRACT(EPOCH FROM (now() - k.oldest_unconsumed_at))::integer AS lag_seconds
              FROM queen.consumer_group_cursors_v1(p_tenant, NULL) k) l
     WHERE l.lag_seconds > p_min_lag_seconds
     ORDER BY l.lag_seconds DESC, l.consumer_group, l.queue_name, l.partition_name
$$;

-- -----------------------------------------------------------------------------
-- queen.consumer_group_detail_v1: every cursor of one group of the tenant,
-- ordered by queue then partition so the broker can fold them per queue, with
-- the group's conflation policy on that queue.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.consumer_group_detail_v1(p_tenant uuid, p_group text)
RETURNS TABLE (queue_name text, conflation boolean, partition_name text, worker_id text, total_consumed bigint,
               offset_lag bigint, time_lag_seconds integer, lease_active boolean)
LANGUAGE sql STABLE AS $$
    SELECT k.queue_name,
           COALESCE((SELECT m.conflation FROM queen.consumer_groups_metadata m
                      WHERE m.tenant_id = p_tenant AND m.queue_id = k.queue_id
                        AND m.consumer_group = p_group AND m.partition_name = ''
                      LIMIT 1), false),
           k.partition_name, k.worker_id, k.total_consumed, k.pending,
           COALESCE(EXTRACT(EPOCH FROM (now() - k.oldest_unconsumed_at))::integer, 0),
           k.lease_expires_at IS NOT NULL AND k.lease_expires_at > now()
      FROM queen.consumer_group_cursors_v1(p_tenant, p_group) k
     ORDER BY k.queue_name, k.partition_name
$$;

-- -----------------------------------------------------------------------------
-- queen.consumer_group_delete_v1: drops a group of the tenant on every queue
-- (p_queue NULL) or on one queue. In one transaction it
--   * locks the group's cursor rows in (partition_id, consumer_group) order and
--     deletes exactly those; a cursor a concurrent pop seeds meanwhile stays,
--     which is what that pop would recreate anyway;
--   * deletes the (queue, group) empty-scan watermarks;
--   * with p_delete_metadata, deletes the registration rows (the whole-group
--     delete includes the group's namespace/task discovery rows);
--   * publishes a whole-queue hot-list repair per queue whose cursors went:
--     nothing was written, so only the announcement tells peer brokers that
--     those partitions are pending again for the group.
-- Returns the cursors deleted, the ids of the queues touched (cursors or
-- registration rows; the broker forgets its registration cache for them) and
-- the names of the queues whose cursors went (the broker wakes their pops).
-- The next pop of the group re-seeds its cursors from its subscription.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.consumer_group_delete_v1(
    p_tenant uuid, p_group text, p_queue text, p_delete_metadata boolean)
RETURNS TABLE (deleted_partitions integer, queue_ids uuid[], repaired_queues text[])
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_deleted integer;
    v_cursor_queues uuid[];
    v_cursor_names text[];
    v_meta_queues uuid[] := ARRAY[]::uuid[];
    v_name text;
    v_queue uuid;
BEGIN
    -- The empty-scan watermarks go first, before the cursor locks (log_watermark_reset_v1).
    IF p_queue IS NULL THEN
        PERFORM queen.log_watermark_reset_v1(NULL, p_group, p_tenant);
    ELSE
        SELECT q.id INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
        IF v_queue IS NOT NULL THEN
            PERFORM queen.log_watermark_reset_v1(ARRAY[v_queue], p_group, p_tenant);
        END IF;
    END IF;

    WITH locked AS MATERIALIZED (
        SELECT c.partition_id, q.id AS queue_id, q.name::text AS queue_name
          FROM queen.log_consumers c
          JOIN queen.log_partitions p ON p.id = c.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         WHERE q.tenant_id = p_tenant AND c.consumer_group = p_group
           AND (p_queue IS NULL OR q.name = p_queue)
         ORDER BY c.partition_id, c.consumer_group
           FOR UPDATE OF c
    ), gone AS (
        DELETE FROM queen.log_consumers c
         USING locked l
         WHERE c.partition_id = l.partition_id AND c.consumer_group = p_group
        RETURNING l.queue_id, l.queue_name
    )
    SELECT count(*)::integer,
           COALESCE(array_agg(DISTINCT g.queue_id), ARRAY[]::uuid[]),
           COALESCE(array_agg(DISTINCT g.queue_name), ARRAY[]::text[])
      INTO v_deleted, v_cursor_queues, v_cursor_names
      FROM gone g;

    IF p_delete_metadata THEN
        WITH gone AS (
            DELETE FROM queen.consumer_groups_metadata m
             WHERE m.tenant_id = p_tenant AND m.consumer_group = p_group
               AND (p_queue IS NULL
                    OR m.queue_id = (SELECT q.id FROM queen.queues q
                                      WHERE q.tenant_id = p_tenant AND q.name = p_queue))
            RETURNING m.queue_id
        )
        SELECT COALESCE(array_agg(DISTINCT g.queue_id) FILTER (WHERE g.queue_id IS NOT NULL), ARRAY[]::uuid[])
          INTO v_meta_queues
          FROM gone g;
    END IF;

    FOREACH v_name IN ARRAY v_cursor_names LOOP
        PERFORM queen.hotlist_repair_publish_v1(p_tenant, v_name, p_group, NULL, 'consumer-group-delete');
    END LOOP;

    deleted_partitions := v_deleted;
    queue_ids := ARRAY(SELECT DISTINCT u FROM unnest(v_cursor_queues || v_meta_queues) AS u);
    repaired_queues := v_cursor_names;
    RETURN NEXT;
END;
$$;
