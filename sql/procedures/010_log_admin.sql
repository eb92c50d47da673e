-- =============================================================================
-- 010_log_admin : admin procedures of the log engine owned by the data-plane
-- admin routes: cursor seeks (per queue, per partition), the subscription
-- timestamp update, the hot-list repair publication, and the dead-letter
-- listing / purge / delete / replay-source reads.
--
-- Every caller-supplied value arrives as a parameter. Every read and write is
-- scoped to one tenant through log_partitions -> queues.tenant_id. Writers that
-- touch several log_consumers rows take them in (partition_id, consumer_group)
-- ascending order (broker/DESIGN.md, Lock order), and never lock a partition
-- row.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.hotlist_repair_publish_v1: durable announcement that a (queue, group)'s
-- cursors were moved on purpose, written inside the moving transaction so no
-- reader can see the move without the announcement. One row per (tenant,
-- queue, group): a second repair naming a different partition widens the scope
-- to NULL (the whole queue) rather than dropping either one. Rows older than an
-- hour are pruned here, inline; the index on repair_at keeps that cheap.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.hotlist_repair_publish_v1(
    p_tenant uuid, p_queue text, p_group text, p_partition text, p_reason text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queen.hotlist_repairs AS r
        (tenant_id, queue_name, consumer_group, partition_name, repair_at, reason)
    VALUES (p_tenant, p_queue, p_group, p_partition, now(), p_reason)
    ON CONFLICT (tenant_id, queue_name, consumer_group) DO UPDATE
       SET partition_name = CASE WHEN r.partition_name IS NOT DISTINCT FROM EXCLUDED.partition_name
                                 THEN r.partition_name END,
           repair_at = EXCLUDED.repair_at,
           reason = EXCLUDED.reason;
    DELETE FROM queen.hotlist_repairs WHERE repair_at < now() - interval '1 hour';
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_seek_one_v1: positions one (partition, group) cursor (a seek).
-- p_to_end: committed = last_offset. Otherwise committed = (base_offset of the
-- first retained segment created at or after p_timestamp) - 1, or last_offset
-- when nothing that recent exists; created_at is monotone in offset order, so
-- the first match is the boundary (segment-granular). The row is created when
-- the group never touched the partition; any lease is released and the retry
-- and attempt state reset, so the next pop of the group serves committed+1.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_seek_one_v1(
    p_partition_id uuid, p_last_offset bigint, p_log_start bigint, p_group text,
    p_to_end boolean, p_timestamp timestamptz)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_committed bigint;
BEGIN
    IF p_to_end THEN
        v_committed := p_last_offset;
    ELSE
        SELECT s.base_offset - 1 INTO v_committed
          FROM queen.log_segments s
         WHERE s.partition_id = p_partition_id
           AND s.base_offset >= p_log_start
           AND s.created_at >= p_timestamp
         ORDER BY s.base_offset
         LIMIT 1;
        v_committed := COALESCE(v_committed, p_last_offset);
    END IF;

    INSERT INTO queen.log_consumers AS c
        (partition_id, consumer_group, committed, batch_end, worker_id, lease_expires_at,
         lease_acquired_at, batch_retry_count, attempt_offset, attempt_count, lease_conflated)
    VALUES (p_partition_id, p_group, v_committed, NULL, NULL, NULL, NULL, 0, NULL, 0, false)
    ON CONFLICT (partition_id, consumer_group) DO UPDATE
       SET committed = EXCLUDED.committed,
           batch_end = NULL,
           worker_id = NULL,
           lease_expires_at = NULL,
           lease_acquired_at = NULL,
           lease_conflated = false,
           batch_retry_count = 0,
           attempt_offset = NULL,
           attempt_count = 0;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_seek_consumer_group_v1: drops the (queue, group) empty-scan
-- watermark so the wildcard candidate scan sees partitions the seek makes
-- pending again, seeks the group's cursor on every partition of one queue of
-- the tenant, in ascending partition id (the lock order), and publishes a
-- whole-queue hot-list repair in the same transaction. Returns the names of the partitions
-- seeked (the broker wakes parked pops with them); an empty array means the
-- queue does not exist for the tenant or has no partitions, and nothing is
-- written.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_seek_consumer_group_v1(
    p_group text, p_queue text, p_to_end boolean, p_timestamp timestamptz, p_tenant uuid)
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    v_p record;
    v_queue_id uuid;
    v_names text[] := ARRAY[]::text[];
BEGIN
    IF NOT p_to_end AND p_timestamp IS NULL THEN
        RAISE EXCEPTION 'log_seek_consumer_group_v1: toEnd or a timestamp is required'
            USING ERRCODE = '22023';
    END IF;
    SELECT q.id INTO v_queue_id FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
    IF v_queue_id IS NULL OR NOT EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.queue_id = v_queue_id) THEN
        RETURN v_names;
    END IF;
    -- First, before the cursor locks (see log_watermark_reset_v1).
    PERFORM queen.log_watermark_reset_v1(ARRAY[v_queue_id], p_group, p_tenant);
    FOR v_p IN
        SELECT p.id, p.name, p.last_offset, p.log_start
          FROM queen.log_partitions p
         WHERE p.queue_id = v_queue_id
         ORDER BY p.id
    LOOP
        PERFORM queen.log_seek_one_v1(v_p.id, v_p.last_offset, v_p.log_start, p_group, p_to_end, p_timestamp);
        v_names := v_names || v_p.name;
    END LOOP;
    PERFORM queen.hotlist_repair_publish_v1(p_tenant, p_queue, p_group, NULL, 'seek-queue');
    RETURN v_names;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_seek_partition_v1: the same seek for one named partition of a
-- queue of the tenant; the repair names that partition (widened to the queue
-- by hotlist_repair_publish_v1 if another partition's repair is pending).
-- Returns false, writing nothing, when the partition does not exist.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_seek_partition_v1(
    p_group text, p_queue text, p_partition text, p_to_end boolean, p_timestamp timestamptz, p_tenant uuid)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_p record;
BEGIN
    IF NOT p_to_end AND p_timestamp IS NULL THEN
        RAISE EXCEPTION 'log_seek_partition_v1: toEnd or a timestamp is required'
            USING ERRCODE = '22023';
    END IF;
    SELECT p.id, p.last_offset, p.log_start, p.queue_id INTO v_p
      FROM queen.log_partitions p
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant AND q.name = p_queue AND p.name = p_partition;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM queen.log_watermark_reset_v1(ARRAY[v_p.queue_id], p_group, p_tenant);
    PERFORM queen.log_seek_one_v1(v_p.id, v_p.last_offset, v_p.log_start, p_group, p_to_end, p_timestamp);
    PERFORM queen.hotlist_repair_publish_v1(p_tenant, p_queue, p_group, p_partition, 'seek-partition');
    RETURN true;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_update_subscription_v1: moves the group's durable subscription
-- timestamp on every queue of the tenant. Existing cursors stay where they are;
-- only partitions the group has not touched yet seed from the new instant
-- (log_seed_cursor_v1). Empty-scan watermarks of the group are dropped so a
-- backward move re-exposes old partitions to the candidate scan. Returns the
-- metadata rows updated. (Named apart from the reference's
-- update_consumer_group_subscription_v1, which 014_consumer_groups owns.)
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_update_subscription_v1(
    p_group text, p_timestamp timestamptz, p_tenant uuid)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer;
BEGIN
    UPDATE queen.consumer_groups_metadata m
       SET subscription_timestamp = p_timestamp
     WHERE m.consumer_group = p_group AND m.tenant_id = p_tenant;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    PERFORM queen.log_watermark_reset_v1(NULL, p_group, p_tenant);
    RETURN v_rows;
END;
$$;

-- -----------------------------------------------------------------------------
-- Dead letters (broker/DESIGN.md, Acks, retries and dead letters).
-- queen.log_dlq has no foreign key, so every reader joins through
-- log_partitions and queues: that join is both the tenant scope and what gives
-- the queue and partition names.
-- -----------------------------------------------------------------------------

-- One page of dead letters, newest first. payload is returned as text so the
-- broker can decrypt an encryption envelope before rendering it.
CREATE OR REPLACE FUNCTION queen.log_dlq_list_v1(
    p_tenant uuid, p_queue text, p_group text, p_limit integer, p_offset integer)
RETURNS TABLE (id uuid, transaction_id text, partition_id uuid, queue_name text, partition_name text,
               consumer_group text, error text, retry_count integer, payload text, failed_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT d.id, d.transaction_id, d.partition_id, q.name::text, p.name, d.consumer_group, d.error,
           COALESCE(d.retry_count, q.retry_limit, 3), d.payload::text, d.failed_at
      FROM queen.log_dlq d
      JOIN queen.log_partitions p ON p.id = d.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
       AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_group IS NULL OR d.consumer_group = p_group)
     ORDER BY d.failed_at DESC, d.id
     LIMIT p_limit OFFSET p_offset
$$;

-- Deletes the dead letters of one queue of the tenant (optionally one group);
-- returns how many went.
CREATE OR REPLACE FUNCTION queen.log_dlq_purge_v1(p_tenant uuid, p_queue text, p_group text)
RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM queen.log_dlq d
         USING queen.log_partitions p, queen.queues q
         WHERE d.partition_id = p.id AND q.id = p.queue_id
           AND q.tenant_id = p_tenant AND q.name = p_queue
           AND (p_group IS NULL OR d.consumer_group = p_group)
        RETURNING 1
    )
    SELECT count(*)::integer FROM gone
$$;

-- Deletes every dead letter at one (partition, transactionId) address of the
-- tenant, whatever its group; returns how many went.
CREATE OR REPLACE FUNCTION queen.log_dlq_delete_v1(p_tenant uuid, p_partition_id uuid, p_transaction_id text)
RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM queen.log_dlq d
         USING queen.log_partitions p, queen.queues q
         WHERE d.partition_id = p.id AND q.id = p.queue_id
           AND q.tenant_id = p_tenant
           AND d.partition_id = p_partition_id AND d.transaction_id = p_transaction_id
        RETURNING 1
    )
    SELECT count(*)::integer FROM gone
$$;

-- The snapshot a replay re-pushes: the newest dead letter at the address, with
-- the queue and partition it came from. No row = nothing to replay.
CREATE OR REPLACE FUNCTION queen.log_dlq_replay_source_v1(
    p_tenant uuid, p_partition_id uuid, p_transaction_id text)
RETURNS TABLE (queue_name text, partition_name text, payload text)
LANGUAGE sql STABLE AS $$
    SELECT q.name::text, p.name, d.payload::text
      FROM queen.log_dlq d
      JOIN queen.log_partitions p ON p.id = d.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
       AND d.partition_id = p_partition_id AND d.transaction_id = p_transaction_id
     ORDER BY d.failed_at DESC
     LIMIT 1
$$;
