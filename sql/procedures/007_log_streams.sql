-- =============================================================================
-- 007_log_streams : the streams cycle (POST /streams/v1/cycle, broker/DESIGN.md,
-- Streams). One cycle of a streaming query commits, in ONE transaction the
-- broker owns, the sink pushes, the ack of the source batch (with the optional
-- lease release) and the query's state upserts and deletes: all of it or none.
--
-- The transaction is three steps on one connection:
--   1. queen.log_streams_cycle_open_v1: the shard lock and the two ownership
--      gates (the query and the source partition belong to the caller's
--      tenant). Writes nothing.
--   2. the sink pushes, written by the broker's partition writer exactly as
--      /push writes them (frames, encryption, zstd, the txn sidecar, dedup),
--      with offsets from queen.log_push_one_v1 and nowhere else (003).
--   3. queen.log_streams_cycle_v1: the source ack, then the state operations.
-- A refusal in step 3 (a stale lease, a malformed operation) RAISEs, so the
-- transaction cannot commit whatever its caller does: the pushes of step 2
-- roll back with it, and no state is half applied.
--
-- Lock order (broker/DESIGN.md, Lock order), as a cycle takes them:
--   advisory (query, partition) -> queen_streams.queries (key share)
--   -> queen.queues (the source queue, key share; then sink provisioning)
--   -> queen.log_partitions (sinks, ascending id) -> queen.log_consumers
--   (the source cursor) -> queen_streams.state (by key, COLLATE "C")
--   -> leaves (segments, txns).
-- The key share on the query row keeps a register reset (which takes that row
-- FOR UPDATE, then deletes state) from interleaving with a cycle; the key
-- share on the source queue row keeps a queue delete (FOR UPDATE on that row
-- first) from deleting the partition's state while a cycle is about to write
-- more of it: the delete waits for the cycle and then sees its rows.
-- Every value is a bound parameter.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- Step 1. Serialises the cycles and idle flushes of one (query, partition)
-- shard on a transaction advisory lock, taken first as the lock order says.
-- The two-integer form keeps these keys apart from every single-bigint
-- advisory key of the broker (its job belts, the empty-scan watermarks): the
-- two forms are separate key spaces. A hash collision between two shards only
-- serialises them, never mixes their state.
-- Returns one row: whether the query is the tenant's, whether the partition is
-- the tenant's, and the source queue and partition names. A missing or foreign
-- id reads as "not found", the same for both, so the route is no oracle for
-- another tenant's ids (the reference settled this: a foreign partition is a
-- plain not found).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_streams_cycle_open_v1(p_tenant uuid, p_query_id uuid, p_partition_id uuid)
RETURNS TABLE (query_found boolean, partition_found boolean, queue_name text, partition_name text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM pg_advisory_xact_lock(737010, hashtext(p_query_id::text || ':' || p_partition_id::text));

    query_found := EXISTS (
        SELECT 1 FROM queen_streams.queries sq
         WHERE sq.id = p_query_id AND sq.tenant_id = p_tenant
           FOR KEY SHARE);
    SELECT q.name, lp.name INTO queue_name, partition_name
      FROM queen.log_partitions lp
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE lp.id = p_partition_id AND q.tenant_id = p_tenant
       FOR KEY SHARE OF q;
    partition_found := FOUND;
    RETURN NEXT;
END;
$$;

-- -----------------------------------------------------------------------------
-- Step 3. The source ack, then the state operations, of a cycle whose step 1
-- found both ids (it re-checks nothing it locked there).
--
-- Ack (p_ack = false: an idle flush, the cursor is not touched):
--   * the cursor row of (partition, group) is taken FOR UPDATE; no row, or a
--     lease that is not p_lease_id's or is no longer live, raises
--     streams_lease_invalid ("invalid or expired lease");
--   * p_ack_ok = false (a nack): the lease is released and the cursor stays,
--     so the batch is delivered again; the retry budget is not spent (streams
--     retry on their own);
--   * ok with p_release_lease: the cursor moves to the lease's batch end, the
--     lease ends and the retry and attempt state resets, as an ack of the
--     whole leased batch does on /ack;
--   * ok without it (a gate that admitted only the first K messages): the
--     cursor moves K offsets past itself (from the oldest retained one when
--     retention passed it) and the lease stays, so the rest is delivered again,
--     in order, when it expires. The walk stops at the lease's batch end: the
--     reference walks the partition's segments, and offsets beyond the lease
--     were never delivered under it.
--   An ok ack on a lease without a batch end raises streams_no_leased_batch.
-- State: the operations apply in array order, so for each key the last one
-- wins; they are written that way, deletes then upserts, each in key order
-- (COLLATE "C", the lock order inside queen_streams.state). An operation
-- whose type is not upsert or delete, or whose key is missing, raises
-- streams_bad_state_op; a key over p_max_key_bytes raises
-- streams_state_key_too_large (the broker checks both first; this is the floor
-- for any other caller).
-- Returns the ack's count and whether it released the lease, whether messages
-- wait behind the released cursor (the broker then wakes parked pops), and the
-- number of state operations applied.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_streams_cycle_v1(
    p_tenant uuid,
    p_query_id uuid,
    p_partition_id uuid,
    p_group text,
    p_ack boolean,
    p_lease_id text,
    p_ack_ok boolean,
    p_ack_count bigint,
    p_release_lease boolean,
    p_state_ops jsonb,
    p_max_key_bytes integer)
RETURNS TABLE (ack_count bigint, lease_released boolean, more boolean, state_ops_applied integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    c record;
    v_count bigint := GREATEST(COALESCE(p_ack_count, 0), 0);
    v_from bigint;
    v_committed bigint;
    v_bad text;
BEGIN
    ack_count := 0;
    lease_released := false;
    more := false;
    state_ops_applied := 0;

    -- Checked before anything is written, whether or not an ack comes first.
    IF p_state_ops IS NULL OR jsonb_typeof(p_state_ops) <> 'array' THEN
        RAISE EXCEPTION 'streams_bad_state_op' USING ERRCODE = '22023', DETAIL = 'state_ops must be an array';
    END IF;
    SELECT CASE
               WHEN jsonb_typeof(o) <> 'object' THEN 'a state op must be an object'
               WHEN o->>'type' IS NULL OR o->>'type' NOT IN ('upsert', 'delete')
                   THEN 'Unknown state_op type: ' || COALESCE(o->>'type', 'null')
               WHEN jsonb_typeof(o->'key') IS DISTINCT FROM 'string' THEN 'a state op needs a string key'
           END INTO v_bad
      FROM jsonb_array_elements(p_state_ops) AS e(o)
     WHERE jsonb_typeof(o) <> 'object'
        OR o->>'type' IS NULL OR o->>'type' NOT IN ('upsert', 'delete')
        OR jsonb_typeof(o->'key') IS DISTINCT FROM 'string'
     LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'streams_bad_state_op' USING ERRCODE = '22023', DETAIL = v_bad;
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_state_ops) AS e(o)
                WHERE octet_length(o->>'key') > p_max_key_bytes) THEN
        RAISE EXCEPTION 'streams_state_key_too_large' USING ERRCODE = '22001';
    END IF;

    IF p_ack THEN
        SELECT lc.committed, lc.batch_end, lc.worker_id, lc.lease_expires_at, lp.last_offset, lp.log_start
          INTO c
          FROM queen.log_consumers lc
          JOIN queen.log_partitions lp ON lp.id = lc.partition_id
         WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
           FOR UPDATE OF lc;
        IF NOT FOUND OR c.worker_id IS DISTINCT FROM p_lease_id
           OR c.lease_expires_at IS NULL OR c.lease_expires_at < now() THEN
            RAISE EXCEPTION 'streams_lease_invalid' USING ERRCODE = 'P0001';
        END IF;

        IF NOT COALESCE(p_ack_ok, true) THEN
            UPDATE queen.log_consumers lc
               SET worker_id = NULL, lease_expires_at = NULL, batch_end = NULL, lease_conflated = false
             WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group;
            lease_released := true;
            more := c.committed < c.last_offset;
        ELSIF c.batch_end IS NULL THEN
            RAISE EXCEPTION 'streams_no_leased_batch' USING ERRCODE = 'P0001';
        ELSIF COALESCE(p_release_lease, true) THEN
            UPDATE queen.log_consumers lc
               SET total_consumed = lc.total_consumed + GREATEST(c.batch_end - lc.committed, 0),
                   committed = GREATEST(lc.committed, c.batch_end),
                   worker_id = NULL, lease_expires_at = NULL, batch_end = NULL, lease_conflated = false,
                   batch_retry_count = 0, attempt_offset = NULL, attempt_count = 0
             WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group;
            ack_count := v_count;
            lease_released := true;
            more := GREATEST(c.committed, c.batch_end) < c.last_offset;
        ELSE
            v_from := GREATEST(c.committed + 1, c.log_start);
            v_committed := CASE WHEN v_count = 0 THEN c.committed
                                ELSE GREATEST(c.committed, LEAST(v_from + v_count - 1, c.batch_end)) END;
            UPDATE queen.log_consumers lc
               SET total_consumed = lc.total_consumed + (v_committed - c.committed),
                   committed = v_committed
             WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group;
            ack_count := v_count;
        END IF;
    END IF;

    IF jsonb_array_length(p_state_ops) > 0 THEN
        WITH ops AS (
            SELECT e.n, e.o->>'type' AS t, e.o->>'key' AS k, COALESCE(e.o->'value', '{}'::jsonb) AS v
              FROM jsonb_array_elements(p_state_ops) WITH ORDINALITY AS e(o, n)
        ), last_op AS (
            SELECT DISTINCT ON (ops.k) ops.k, ops.t FROM ops ORDER BY ops.k, ops.n DESC
        )
        DELETE FROM queen_streams.state s
         WHERE s.ctid = ANY (ARRAY(
               SELECT s2.ctid FROM queen_streams.state s2
                 JOIN last_op l ON l.k = s2.key AND l.t = 'delete'
                WHERE s2.query_id = p_query_id AND s2.partition_id = p_partition_id
                ORDER BY s2.key COLLATE "C"
                  FOR UPDATE OF s2));

        INSERT INTO queen_streams.state AS s (query_id, partition_id, key, value, updated_at)
        SELECT p_query_id, p_partition_id, l.k, l.v, now()
          FROM (SELECT DISTINCT ON (e.o->>'key') e.o->>'key' AS k, e.o->>'type' AS t,
                       COALESCE(e.o->'value', '{}'::jsonb) AS v
                  FROM jsonb_array_elements(p_state_ops) WITH ORDINALITY AS e(o, n)
                 ORDER BY e.o->>'key', e.n DESC) l
         WHERE l.t = 'upsert'
         ORDER BY l.k COLLATE "C"
        ON CONFLICT (query_id, partition_id, key) DO UPDATE
           SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at;

        state_ops_applied := jsonb_array_length(p_state_ops);
    END IF;
    RETURN NEXT;
END;
$$;
