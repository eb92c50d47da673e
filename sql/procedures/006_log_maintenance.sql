-- =============================================================================
-- 006_log_maintenance : the retention cycle's steps.
--
--   log_retention_work_v1          the cycle's work list: partitions with
--                                  something due, cutoffs from one now()
--   log_retention_step_v1          retention / completed retention / max-wait
--                                  eviction: one bounded delete, one partition
--   log_txns_purge_step_v1         the hash-sidecar purge, same shape
--   log_partition_dead_v1          may a partition be reclaimed?
--   log_partition_cleanup_step_v1  reclaim empty, long-idle partitions
--
-- Steps, not sweeps: one call is one short transaction over one partition that
-- deletes at most p_max_rows rows, and the broker loops a step until it answers
-- done. A backlog is drained in many short transactions, so pushes interleave.
--
-- Locks (broker/DESIGN.md, Lock order): every per-partition step takes exactly
-- one queen.log_partitions row lock (the push allocator's serializer) and holds
-- it to its own commit, so it cannot deadlock with the multi-partition writers.
-- The cleanup step is the one that takes many partition locks: ascending by id,
-- in a single statement, SKIP LOCKED, so it never queues in front of a push.
--
-- Deletes are prefix-contiguous: segments (and log_txns rows) go oldest first
-- and log_start (txns_start) is always the base of the first survivor or one
-- past the last offset, so "frames retained = last_offset - log_start + 1"
-- stays exact. oldest_live_at / oldest_txn_at are kept equal to created_at of
-- the row at the watermark (NULL = nothing left) in the same UPDATE, which is
-- what keeps the work list a cheap range scan. queen.log_dlq is never touched
-- here.
-- =============================================================================

-- Owned here per the catalogue: the retention analytics readers scan newest first.
CREATE INDEX IF NOT EXISTS idx_retention_history_executed_at
    ON queen.retention_history (executed_at DESC);

-- -----------------------------------------------------------------------------
-- Work list of one cycle: every partition with something due, ascending by id,
-- with the cutoffs of its queue computed from a single now(). A NULL cutoff
-- means the rule does not apply to that queue:
--   all_cutoff        retention_enabled and retention_seconds > 0
--   completed_cutoff  retention_enabled and completed_retention_seconds > 0
--   max_wait_cutoff   max_wait_time_seconds > 0 (whatever retention_enabled says)
--   txns_cutoff       always: GREATEST(dedup window, completed retention, 900 s)
-- The oldest_* watermarks decide "due" without touching the log tables.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_retention_work_v1()
RETURNS TABLE (
    partition_id uuid,
    queue_id uuid,
    queue_name text,
    all_cutoff timestamptz,
    completed_cutoff timestamptz,
    max_wait_cutoff timestamptz,
    txns_cutoff timestamptz,
    segments_due boolean,
    txns_due boolean)
LANGUAGE sql STABLE AS $$
    WITH cut AS (
        SELECT q.id, q.name,
               CASE WHEN COALESCE(q.retention_enabled, false) AND COALESCE(q.retention_seconds, 0) > 0
                    THEN now() - make_interval(secs => q.retention_seconds) END AS all_cutoff,
               CASE WHEN COALESCE(q.retention_enabled, false) AND COALESCE(q.completed_retention_seconds, 0) > 0
                    THEN now() - make_interval(secs => q.completed_retention_seconds) END AS completed_cutoff,
               CASE WHEN COALESCE(q.max_wait_time_seconds, 0) > 0
                    THEN now() - make_interval(secs => q.max_wait_time_seconds) END AS max_wait_cutoff,
               now() - make_interval(secs => GREATEST(COALESCE(q.dedup_window_seconds, 0),
                                                      COALESCE(q.completed_retention_seconds, 0),
                                                      900)) AS txns_cutoff
        FROM queen.queues q
    )
    SELECT w.id, w.queue_id, w.name, w.all_cutoff, w.completed_cutoff, w.max_wait_cutoff, w.txns_cutoff,
           w.segments_due, w.txns_due
    FROM (
        SELECT p.id, c.id AS queue_id, c.name, c.all_cutoff, c.completed_cutoff, c.max_wait_cutoff, c.txns_cutoff,
               COALESCE(p.oldest_live_at < GREATEST(c.all_cutoff, c.completed_cutoff, c.max_wait_cutoff), false)
                   AS segments_due,
               COALESCE(p.oldest_txn_at < c.txns_cutoff, false) AS txns_due
        FROM cut c
        JOIN queen.log_partitions p ON p.queue_id = c.id
        WHERE p.oldest_live_at IS NOT NULL OR p.oldest_txn_at IS NOT NULL
    ) w
    WHERE w.segments_due OR w.txns_due
    ORDER BY w.id
$$;

-- -----------------------------------------------------------------------------
-- One bounded retention step over one partition. Looks at the first p_max_rows
-- live segments and deletes the leading run of those that are due:
--   * rule "all" (p_all_cutoff): created_at < cutoff, whatever the cursors say.
--     retention_seconds and max_wait_time_seconds both come through here, the
--     latter with p_history_type 'max_wait_time_eviction';
--   * rule "completed" (p_completed_cutoff): created_at < cutoff AND every
--     consumer group has committed past the segment's last frame. A group
--     registered for the queue (consumer_groups_metadata) that has no cursor on
--     this partition yet will seed from its subscription timestamp, so a
--     segment it could still be served (created_at >= that timestamp) is kept.
--     A partition nobody has consumed from keeps everything under this rule.
-- Both predicates are monotone in offset order (created_at is, and a cursor
-- covers a prefix), so the due segments form a prefix and the delete stays
-- contiguous. Whole segments only: a segment a group is midway through stays.
-- Writes one queen.retention_history row (frames deleted) per step that
-- deleted something, in the same transaction.
-- Returns {"deleted": segments, "frames": n, "logStart": x, "done": bool};
-- done = nothing more is due right now.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_retention_step_v1(
    p_partition_id uuid,
    p_all_cutoff timestamptz,
    p_completed_cutoff timestamptz,
    p_max_rows integer,
    p_history_type text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer := GREATEST(COALESCE(p_max_rows, 1), 1);
    v_from bigint;
    v_queue uuid;
    v_partition_name text;
    v_min_committed bigint;
    v_unseeded_floor timestamptz;
    v_head integer;
    v_due integer;
    v_all_due integer;
    v_max_base bigint;
    v_max_end bigint;
    v_frames bigint;
    v_deleted integer;
    v_next_created timestamptz;
BEGIN
    SELECT p.log_start, p.queue_id, p.name INTO v_from, v_queue, v_partition_name
    FROM queen.log_partitions p WHERE p.id = p_partition_id
    FOR UPDATE;
    IF NOT FOUND THEN
        -- Deleted meanwhile (queue deletion, cleanup): nothing to do.
        RETURN jsonb_build_object('deleted', 0, 'frames', 0, 'logStart', NULL, 'done', true);
    END IF;

    IF p_completed_cutoff IS NOT NULL THEN
        SELECT min(c.committed) INTO v_min_committed
        FROM queen.log_consumers c WHERE c.partition_id = p_partition_id;
        SELECT min(m.subscription_timestamp) INTO v_unseeded_floor
        FROM queen.consumer_groups_metadata m
        WHERE m.queue_id = v_queue
          AND m.partition_name IN ('', v_partition_name)
          AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                          WHERE c.partition_id = p_partition_id AND c.consumer_group = m.consumer_group);
    END IF;

    WITH head AS (
        SELECT s.base_offset, s.end_offset,
               (p_all_cutoff IS NOT NULL AND s.created_at < p_all_cutoff) AS all_due,
               (p_completed_cutoff IS NOT NULL AND s.created_at < p_completed_cutoff
                AND v_min_committed IS NOT NULL AND s.end_offset <= v_min_committed
                AND (v_unseeded_floor IS NULL OR s.created_at < v_unseeded_floor)) AS completed_due
        FROM queen.log_segments s
        WHERE s.partition_id = p_partition_id AND s.base_offset >= v_from
        ORDER BY s.base_offset
        LIMIT v_rows
    ),
    first_kept AS (
        SELECT min(h.base_offset) AS base FROM head h WHERE NOT (h.all_due OR h.completed_due)
    ),
    due AS (
        SELECT h.* FROM head h, first_kept k
        WHERE k.base IS NULL OR h.base_offset < k.base
    )
    SELECT (SELECT count(*) FROM head),
           count(*), count(*) FILTER (WHERE d.all_due),
           max(d.base_offset), max(d.end_offset), COALESCE(sum(d.end_offset - d.base_offset + 1), 0)
      INTO v_head, v_due, v_all_due, v_max_base, v_max_end, v_frames
      FROM due d;

    IF v_due = 0 THEN
        RETURN jsonb_build_object('deleted', 0, 'frames', 0, 'logStart', v_from, 'done', true);
    END IF;

    DELETE FROM queen.log_segments s
    WHERE s.partition_id = p_partition_id AND s.base_offset >= v_from AND s.base_offset <= v_max_base;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;

    SELECT s.created_at INTO v_next_created
    FROM queen.log_segments s
    WHERE s.partition_id = p_partition_id AND s.base_offset > v_max_base
    ORDER BY s.base_offset LIMIT 1;

    UPDATE queen.log_partitions
       SET log_start = v_max_end + 1,
           oldest_live_at = v_next_created
     WHERE id = p_partition_id AND log_start < v_max_end + 1;

    INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type)
    VALUES (p_partition_id, LEAST(v_frames, 2147483647)::integer,
            COALESCE(p_history_type, CASE WHEN v_all_due = v_due THEN 'retention' ELSE 'completed_retention' END));

    RETURN jsonb_build_object('deleted', v_deleted, 'frames', v_frames, 'logStart', v_max_end + 1,
                              -- A full head of due segments may have more due behind it.
                              'done', NOT (v_due = v_head AND v_head = v_rows));
END;
$$;

-- -----------------------------------------------------------------------------
-- One bounded purge step of queen.log_txns for one partition: deletes the
-- leading run (at most p_max_rows) of hash rows created before p_cutoff and
-- advances txns_start / oldest_txn_at under the partition row lock, the lock
-- the push dedup probe reads txns_start under. The rows expire on their own
-- clock, independent of the segments: the caller's cutoff is
-- now() - GREATEST(dedup window, completed retention, 900 s), so neither the
-- dedup probe nor a plausible late ack loses a hash it still needs.
-- Returns {"deleted": n, "txnsStart": x, "done": bool}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_txns_purge_step_v1(
    p_partition_id uuid,
    p_cutoff timestamptz,
    p_max_rows integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer := GREATEST(COALESCE(p_max_rows, 1), 1);
    v_from bigint;
    v_head integer;
    v_due integer;
    v_max_base bigint;
    v_max_end bigint;
    v_deleted integer;
    v_next_created timestamptz;
BEGIN
    SELECT p.txns_start INTO v_from
    FROM queen.log_partitions p WHERE p.id = p_partition_id
    FOR UPDATE;
    IF NOT FOUND OR p_cutoff IS NULL THEN
        RETURN jsonb_build_object('deleted', 0, 'txnsStart', v_from, 'done', true);
    END IF;

    WITH head AS (
        SELECT t.base_offset, t.end_offset, t.created_at < p_cutoff AS due
        FROM queen.log_txns t
        WHERE t.partition_id = p_partition_id AND t.base_offset >= v_from
        ORDER BY t.base_offset
        LIMIT v_rows
    ),
    first_kept AS (
        SELECT min(h.base_offset) AS base FROM head h WHERE NOT h.due
    )
    SELECT (SELECT count(*) FROM head), count(*), max(h.base_offset), max(h.end_offset)
      INTO v_head, v_due, v_max_base, v_max_end
      FROM head h, first_kept k
     WHERE k.base IS NULL OR h.base_offset < k.base;

    IF v_due = 0 THEN
        RETURN jsonb_build_object('deleted', 0, 'txnsStart', v_from, 'done', true);
    END IF;

    DELETE FROM queen.log_txns t
    WHERE t.partition_id = p_partition_id AND t.base_offset >= v_from AND t.base_offset <= v_max_base;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;

    SELECT t.created_at INTO v_next_created
    FROM queen.log_txns t
    WHERE t.partition_id = p_partition_id AND t.base_offset > v_max_base
    ORDER BY t.base_offset LIMIT 1;

    UPDATE queen.log_partitions
       SET txns_start = v_max_end + 1,
           oldest_txn_at = v_next_created
     WHERE id = p_partition_id AND txns_start < v_max_end + 1;

    RETURN jsonb_build_object('deleted', v_deleted, 'txnsStart', v_max_end + 1,
                              'done', NOT (v_due = v_head AND v_head = v_rows));
END;
$$;

-- -----------------------------------------------------------------------------
-- May this partition be reclaimed? True only when it holds nothing and nobody
-- touched it since p_cutoff (now() - PARTITION_CLEANUP_DAYS):
--   * created_at and last_write_at both before the cutoff;
--   * no segments (never written, or retention emptied it);
--   * no queen.log_dlq rows and no queen_streams.state rows: both are keyed by
--     partition id WITHOUT a foreign key, so dropping the partition would leave
--     them unreachable rather than clean them up;
--   * no live lease and no cursor created, leased or lease-expiring inside the
--     window. An expired lease is not a veto: nobody will ever come back to an
--     empty partition to clear it.
-- One definition for the candidate scan and the re-check under the row locks.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_partition_dead_v1(p_partition_id uuid, p_cutoff timestamptz)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p.created_at < p_cutoff
       AND p.last_write_at < p_cutoff
       AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id)
       AND NOT EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p.id)
       AND NOT EXISTS (SELECT 1 FROM queen_streams.state st WHERE st.partition_id = p.id)
       AND NOT EXISTS (
           SELECT 1 FROM queen.log_consumers c
           WHERE c.partition_id = p.id
             AND ((c.batch_end IS NOT NULL AND (c.lease_expires_at IS NULL OR c.lease_expires_at > now()))
                  OR c.created_at >= p_cutoff
                  OR c.lease_acquired_at >= p_cutoff
                  OR c.lease_expires_at >= p_cutoff))
    FROM queen.log_partitions p
    WHERE p.id = p_partition_id
$$;

-- -----------------------------------------------------------------------------
-- One bounded cleanup step: deletes at most p_max_rows reclaimable partitions.
-- Candidates are locked ascending by id in ONE statement with SKIP LOCKED: a
-- partition a pusher holds is busy by definition and is stepped over, not
-- waited for. The predicate is then re-checked under the held locks, because a
-- row lock re-check (EvalPlanQual) covers the row's own columns but not the
-- NOT EXISTS legs; a push needs the same lock to add a segment, so nothing
-- slips in between the re-check and the delete.
-- The parent queue rows are taken FOR KEY SHARE in the same SKIP LOCKED
-- statement. The delete trigger counts the reclaimed partitions into
-- queue_lag_metrics, whose foreign key needs that lock: taken only there, it
-- came after the partition locks (partition -> queue, against the lock
-- order) and deadlocked a queue delete, which holds the queue and waits for
-- the partition. Held up front, a queue being deleted or purged is stepped
-- over like a busy partition, and a queue held here cannot vanish before this
-- step commits. The statement never waits, so the order inside it is moot.
-- Deleting the row cascades its cursors (and its segments, none by definition);
-- log_txns has no foreign key and is deleted explicitly, together with the
-- partition's stat row (no foreign key either). One retention_history row
-- '__partition_deleted__' per partition (0 messages: the double underscores
-- keep it out of the messages-evicted series).
-- Returns {"deleted": n, "done": bool}.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_partition_cleanup_step_v1(p_cutoff timestamptz, p_max_rows integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer := GREATEST(COALESCE(p_max_rows, 1), 1);
    v_candidates uuid[];
    v_dead uuid[];
    v_deleted integer := 0;
BEGIN
    IF p_cutoff IS NULL THEN
        RETURN jsonb_build_object('deleted', 0, 'done', true);
    END IF;

    -- The two timestamp quals are stated inline so the scan prunes on them
    -- before evaluating the predicate function.
    SELECT array_agg(c.id ORDER BY c.id) INTO v_candidates
    FROM (
        SELECT p.id
        FROM queen.log_partitions p
        JOIN queen.queues q ON q.id = p.queue_id
        WHERE p.created_at < p_cutoff
          AND p.last_write_at < p_cutoff
          AND queen.log_partition_dead_v1(p.id, p_cutoff)
        ORDER BY p.id
        LIMIT v_rows
        FOR KEY SHARE OF q SKIP LOCKED
        FOR UPDATE OF p SKIP LOCKED
    ) c;

    IF v_candidates IS NULL THEN
        RETURN jsonb_build_object('deleted', 0, 'done', true);
    END IF;

    SELECT array_agg(u ORDER BY u) INTO v_dead
    FROM unnest(v_candidates) u
    WHERE queen.log_partition_dead_v1(u, p_cutoff);

    IF v_dead IS NOT NULL THEN
        DELETE FROM queen.log_txns t WHERE t.partition_id = ANY (v_dead);
        -- In partition order, the order the stats refresh upserts these rows in.
        PERFORM 1 FROM queen.stats s
         WHERE s.stat_type = 'partition' AND s.partition_id = ANY (v_dead)
         ORDER BY s.partition_id
           FOR UPDATE;
        DELETE FROM queen.stats s WHERE s.stat_type = 'partition' AND s.partition_id = ANY (v_dead);
        INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type)
        SELECT u, 0, '__partition_deleted__' FROM unnest(v_dead) u;
        DELETE FROM queen.log_partitions p WHERE p.id = ANY (v_dead);
        GET DIAGNOSTICS v_deleted = ROW_COUNT;
    END IF;

    -- A full batch of candidates may have more behind it; a batch the re-check
    -- spared entirely must end the caller's loop (it would select them again).
    RETURN jsonb_build_object('deleted', v_deleted,
                              'done', cardinality(v_candidates) < v_rows OR v_deleted = 0);
END;
$$;
