-- =============================================================================
-- 004_log_pop : the claim path.
--
-- State is one log_consumers row per (partition, consumer group): committed is
-- the last completed offset, a lease is the inclusive span (committed,
-- batch_end] held by worker_id until lease_expires_at. Claims take the row with
-- SKIP LOCKED and a "no live lease" predicate, so a pop never waits on a lock
-- and an expired lease is simply reclaimable (no reaper). Segments are returned
-- whole with (seq, start_off, take): the broker decompresses and slices.
-- =============================================================================

-- The cursor a (partition, group) starts from on first contact
-- (broker/DESIGN.md, Pop path): the group's durable subscription timestamp,
-- else the pop's subscriptionFrom, else mode "new" = the current end, else
-- everything retained. Queue mode always starts at the oldest retained offset.
CREATE OR REPLACE FUNCTION queen.log_seed_cursor_v1(
    p_partition_id uuid, p_group text, p_sub_mode text, p_sub_from timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ts timestamptz;
    v_last bigint;
    v_base bigint;
BEGIN
    IF p_group = '__QUEUE_MODE__' THEN
        RETURN -1;
    END IF;
    SELECT lp.last_offset INTO v_last FROM queen.log_partitions lp WHERE lp.id = p_partition_id;
    SELECT m.subscription_timestamp INTO v_ts
    FROM queen.consumer_groups_metadata m
    JOIN queen.log_partitions lp ON lp.queue_id = m.queue_id
    WHERE lp.id = p_partition_id AND m.consumer_group = p_group AND m.partition_name = ''
    ORDER BY m.created_at
    LIMIT 1;
    IF v_ts IS NULL THEN
        v_ts := p_sub_from;
    END IF;
    IF v_ts IS NULL THEN
        RETURN CASE WHEN p_sub_mode = 'new' THEN v_last ELSE -1 END;
    END IF;
    SELECT s.base_offset INTO v_base FROM queen.log_segments s
    WHERE s.partition_id = p_partition_id AND s.created_at >= v_ts
    ORDER BY s.base_offset
    LIMIT 1;
    RETURN COALESCE(v_base - 1, v_last);
END;
$$;

-- The group's stored conflation policy on the queue; NULL when the group has
-- not registered there (it then delivers as the pop asks).
CREATE OR REPLACE FUNCTION queen.log_group_policy_v1(p_queue_id uuid, p_group text)
RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT bool_or(m.conflation) FROM queen.consumer_groups_metadata m
     WHERE m.queue_id = p_queue_id AND m.consumer_group = p_group AND m.partition_name = ''
$$;

-- The first queue-level pop of a (queue, group) records the subscription
-- (mode "new" stores now, anything else the epoch, an explicit
-- subscriptionFrom that instant) and the group's conflation policy, and seeds
-- cursors for every existing partition in one statement; later partitions seed
-- lazily from the record. Returns the policy as stored: a later registration
-- asking for another one does not change it (the first registration wins),
-- and the caller reports the disagreement. Queue mode never conflates.
-- p_conflation comes last with a default, as p_conflate on log_pop_v1 does.
DROP FUNCTION IF EXISTS queen.log_register_group_v1(uuid, uuid, text, text, timestamptz);
CREATE OR REPLACE FUNCTION queen.log_register_group_v1(
    p_tenant uuid, p_queue_id uuid, p_group text, p_sub_mode text, p_sub_from timestamptz,
    p_conflation boolean DEFAULT false)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_inserted integer;
BEGIN
    IF p_group = '__QUEUE_MODE__' THEN
        RETURN false;
    END IF;
    INSERT INTO queen.consumer_groups_metadata
        (tenant_id, consumer_group, queue_id, partition_name, subscription_mode, subscription_timestamp, conflation)
    VALUES (p_tenant, p_group, p_queue_id, '',
            CASE WHEN p_sub_mode = 'new' THEN 'new' ELSE 'all' END,
            COALESCE(p_sub_from, CASE WHEN p_sub_mode = 'new' THEN now() ELSE 'epoch'::timestamptz END),
            COALESCE(p_conflation, false))
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_inserted = ROW_COUNT;
    IF v_inserted = 0 THEN
        RETURN COALESCE(queen.log_group_policy_v1(p_queue_id, p_group), false);
    END IF;
    INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
    SELECT lp.id, p_group, queen.log_seed_cursor_v1(lp.id, p_group, p_sub_mode, p_sub_from)
    FROM queen.log_partitions lp
    WHERE lp.queue_id = p_queue_id
    ORDER BY lp.id
    ON CONFLICT (partition_id, consumer_group) DO NOTHING;
    RETURN COALESCE(p_conflation, false);
END;
$$;

-- Empty-scan watermark (table consumer_watermarks; broker/DESIGN.md, Pop path).
-- Once a (queue, group) scan found nothing and a re-check that ignores leases
-- confirmed that no partition has anything past the group's cursor, later scans
-- look only at partitions written since then (last_write_at, with 2 minutes of
-- slack for pushes in flight and the per-second quantization), which the
-- (queue_id, last_write_at) index serves. An idle queue of 10,000 partitions is
-- then no longer a full scan on every pop that answers at once and on every
-- idle re-check of a long-poll.
--
-- What may make an old partition pending again without a write moves a cursor
-- back or deletes it: seeks, subscription moves and group deletes. Those drop
-- the watermark through log_watermark_reset_v1, which takes (blocking) the
-- advisory lock the advance only tries, so an advance whose re-check read the
-- state before such a change cannot write its watermark after it. Per queue the
-- lock is keyed on (queue, group); a reset across a tenant's queues takes the
-- group's key, which every advance also tries in shared mode. Resets take it
-- first, before any cursor lock (advisory precedes log_consumers in the lock
-- order, broker/DESIGN.md, Lock order); the advance only tries, so it never
-- waits.
CREATE OR REPLACE FUNCTION queen.log_watermark_key_v1(p_queue_id uuid, p_group text)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended(COALESCE(p_queue_id::text, '*') || '|' || p_group, 737100)
$$;

-- Where a (queue, group) scan starts: partitions written at or after this. The
-- watermark less the 2 minutes of slack; -infinity (every partition) without one.
CREATE OR REPLACE FUNCTION queen.log_scan_floor_v1(p_queue_id uuid, p_group text)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT COALESCE((SELECT w.last_empty_scan_at - interval '2 minutes' FROM queen.consumer_watermarks w
                      WHERE w.queue_id = p_queue_id AND w.consumer_group = p_group), '-infinity')
$$;

-- The pending-partition condition of a (queue, group) scan, as SQL text for
-- EXECUTE with $1 = queue id, $2 = group, $3 = scan floor: partitions written
-- since the floor with data past the group's cursor (or no cursor yet) and,
-- with p_lease_free, no live lease. One definition for the candidate scan, the
-- watermark's lease-ignoring re-check and the minPopWaitTime fill estimate.
CREATE OR REPLACE FUNCTION queen.log_pending_from_v1(p_lease_free boolean)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT ' FROM queen.log_partitions lp'
        || ' LEFT JOIN queen.log_consumers c ON c.partition_id = lp.id AND c.consumer_group = $2'
        || ' WHERE lp.queue_id = $1 AND lp.last_write_at >= $3 AND lp.last_offset > COALESCE(c.committed, -1)'
        || CASE WHEN p_lease_free
                THEN ' AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < now())'
                ELSE '' END
$$;

-- Drops the group's watermarks on the given queues, or with p_queue_ids NULL
-- on every queue of p_tenant (under the group's key). Call before taking any
-- log_consumers lock.
CREATE OR REPLACE FUNCTION queen.log_watermark_reset_v1(p_queue_ids uuid[], p_group text, p_tenant uuid)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_queue uuid;
BEGIN
    IF p_queue_ids IS NULL THEN
        PERFORM pg_advisory_xact_lock(queen.log_watermark_key_v1(NULL, p_group));
        DELETE FROM queen.consumer_watermarks w
         USING queen.queues q
         WHERE w.queue_id = q.id AND w.consumer_group = p_group AND q.tenant_id = p_tenant;
        RETURN;
    END IF;
    FOR v_queue IN SELECT DISTINCT u FROM unnest(p_queue_ids) u WHERE u IS NOT NULL ORDER BY u LOOP
        PERFORM pg_advisory_xact_lock(queen.log_watermark_key_v1(v_queue, p_group));
    END LOOP;
    DELETE FROM queen.consumer_watermarks w
     WHERE w.queue_id = ANY (p_queue_ids) AND w.consumer_group = p_group;
END;
$$;

-- After an empty scan: at most every 30 s per (queue, group), re-checks the
-- scanned window ignoring leases (a leased partition or one without a cursor row
-- still counts as pending) and moves the watermark to now() only if nothing is
-- pending. A leased span stays visible to later scans this way, so its lease
-- expiry and a failed ack's retry are never hidden. Returns whether it moved.
CREATE OR REPLACE FUNCTION queen.log_watermark_advance_v1(p_queue_id uuid, p_group text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_floor timestamptz;
    v_checked timestamptz;
    v_pending boolean;
BEGIN
    IF NOT pg_try_advisory_xact_lock_shared(queen.log_watermark_key_v1(NULL, p_group))
       OR NOT pg_try_advisory_xact_lock(queen.log_watermark_key_v1(p_queue_id, p_group)) THEN
        RETURN false; -- a reset (or another advance) is at it
    END IF;
    SELECT w.updated_at INTO v_checked FROM queen.consumer_watermarks w
     WHERE w.queue_id = p_queue_id AND w.consumer_group = p_group;
    IF v_checked > now() - interval '30 seconds' THEN
        RETURN false; -- the common case: checked lately, nothing written
    END IF;
    -- Nor behind a queue delete: the watermark row's foreign key would wait for it.
    PERFORM 1 FROM queen.queues q WHERE q.id = p_queue_id FOR KEY SHARE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Read again under the lock: a reset may have committed since the scan read it.
    v_floor := queen.log_scan_floor_v1(p_queue_id, p_group);
    EXECUTE 'SELECT EXISTS (SELECT 1' || queen.log_pending_from_v1(false) || ')'
       INTO v_pending
      USING p_queue_id, p_group, v_floor;
    INSERT INTO queen.consumer_watermarks AS w (queue_id, consumer_group, last_empty_scan_at, updated_at)
    VALUES (p_queue_id, p_group, CASE WHEN v_pending THEN 'epoch'::timestamptz ELSE now() END, now())
    ON CONFLICT (queue_id, consumer_group) DO UPDATE
       SET last_empty_scan_at = CASE WHEN v_pending THEN w.last_empty_scan_at ELSE EXCLUDED.last_empty_scan_at END,
           updated_at = EXCLUDED.updated_at;
    RETURN NOT v_pending;
END;
$$;

-- Partitions of a queue that may have something for the group: written since
-- the group's empty-scan watermark, data beyond the cursor (or no cursor yet)
-- and no live lease. Random order spreads concurrent consumers over partitions
-- rather than piling them onto the same one; SKIP LOCKED in the claim resolves
-- the races this read cannot see. Planned per call (EXECUTE): the window's
-- width, from a few partitions to the whole queue, decides between the index
-- and a scan, which a generic plan could not know. An empty answer may advance
-- the watermark.
CREATE OR REPLACE FUNCTION queen.log_pop_candidates_v1(p_queue_id uuid, p_group text, p_limit integer)
RETURNS TABLE (partition_id uuid, partition_name text)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'SELECT lp.id, lp.name' || queen.log_pending_from_v1(true) || ' ORDER BY random() LIMIT $4'
      USING p_queue_id, p_group, queen.log_scan_floor_v1(p_queue_id, p_group), p_limit;
    IF NOT FOUND THEN
        PERFORM queen.log_watermark_advance_v1(p_queue_id, p_group);
    END IF;
END;
$$;

-- The queue's minPopWaitTime (ms, 0 = off) and, when it is on, how many
-- messages a claim could take right now: pending past the group's cursor, lease
-- free, in the candidate window, counted up to p_cap (a partition never yet
-- seen by the group counts its whole log). Delayed and windowed segments are
-- counted too, so the figure can only err high, which serves the pop at once.
-- Read by a queue-level long-poll before it claims: a non-empty but under-full
-- queue holds the pop back up to minPopWaitTime for the batch to fill (the
-- reference broker's semantics), so one claim carries more messages. NULL wait:
-- no such queue.
CREATE OR REPLACE FUNCTION queen.log_pop_fill_v1(p_queue_id uuid, p_group text, p_cap integer)
RETURNS TABLE (min_pop_wait_ms integer, claimable integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT COALESCE(q.min_pop_wait_time, 0) INTO min_pop_wait_ms FROM queen.queues q WHERE q.id = p_queue_id;
    claimable := 0;
    IF COALESCE(min_pop_wait_ms, 0) > 0 THEN
        EXECUTE 'SELECT LEAST(COALESCE(sum(n), 0), $4)::integer FROM (SELECT lp.last_offset'
             || ' - GREATEST(COALESCE(c.committed, -1), lp.log_start - 1) AS n' || queen.log_pending_from_v1(true)
             || ' LIMIT $4) s'
           INTO claimable
          USING p_queue_id, p_group, queen.log_scan_floor_v1(p_queue_id, p_group), GREATEST(p_cap, 1);
    END IF;
    RETURN NEXT;
END;
$$;

-- log_pop_v1's row type changed across builds upstream, so it is dropped and
-- recreated rather than replaced (OR REPLACE refuses a new OUT row type). The
-- first line drops the signature of builds before conflation; p_conflate comes
-- last with a default, so a broker of such a build, still serving during a
-- rolling restart, keeps popping through this definition.
DROP FUNCTION IF EXISTS queen.log_pop_v1(uuid, text, integer, integer, text, boolean, text, timestamptz);
DROP FUNCTION IF EXISTS queen.log_pop_v1(uuid, text, integer, integer, text, boolean, text, timestamptz, boolean);
-- Claims up to p_batch frames of one partition for one group. Gates: the
-- queue's windowBuffer (a segment younger than W seconds holds the whole
-- partition back) and delayedProcessing (only segments at least D seconds
-- old). Returns one row per segment to deliver; no rows = nothing claimed
-- (no lease taken). With p_auto_ack the cursor moves at once and no lease is
-- held (at-most-once); otherwise the span is leased to p_worker_id.
--
-- p_conflate (the group's conflation policy, resolved by the broker):
-- deliver one frame, the newest visible one, and lease the whole span up to it,
-- (committed, tail], so acking it retires everything before it. delayedProcessing
-- hides a suffix of the log (created_at grows with the offset), so the newest
-- segment old enough is the newest visible one and nothing above the tail can
-- already be visible: committing to the tail skips no message a consumer could
-- have seen. The attempt count stays anchored at committed + 1, so a tail that
-- moves between redeliveries still counts as the same episode.
CREATE FUNCTION queen.log_pop_v1(
    p_partition_id uuid,
    p_group text,
    p_batch integer,
    p_lease_seconds integer,
    p_worker_id text,
    p_auto_ack boolean,
    p_sub_mode text,
    p_sub_from timestamptz,
    p_conflate boolean DEFAULT false)
RETURNS TABLE (seq bigint, start_off integer, take integer, msg_count integer,
               created_at timestamptz, blob bytea, attempt integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := now();
    v_committed bigint;
    v_attempt_offset bigint;
    v_attempt_count integer;
    v_last bigint;
    v_lease integer;
    v_delayed integer;
    v_window integer;
    v_wanted bigint;
    v_remaining integer := GREATEST(p_batch, 1);
    v_end bigint;
    v_taken integer := 0;
    v_attempt integer;
    v_newest timestamptz;
    v_any boolean := false;
    v_conflate boolean := COALESCE(p_conflate, false);
    v_visible boolean;
    r record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                   WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group) THEN
        INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
        VALUES (p_partition_id, p_group, queen.log_seed_cursor_v1(p_partition_id, p_group, p_sub_mode, p_sub_from))
        ON CONFLICT (partition_id, consumer_group) DO NOTHING;
    END IF;

    SELECT c.committed, c.attempt_offset, c.attempt_count, lp.last_offset,
           COALESCE(NULLIF(p_lease_seconds, 0), q.lease_time, 60),
           COALESCE(q.delayed_processing, 0), COALESCE(q.window_buffer, 0)
      INTO v_committed, v_attempt_offset, v_attempt_count, v_last, v_lease, v_delayed, v_window
      FROM queen.log_consumers c
      JOIN queen.log_partitions lp ON lp.id = c.partition_id
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group
       AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < v_now)
       FOR UPDATE OF c SKIP LOCKED;
    IF NOT FOUND OR v_last <= v_committed THEN
        RETURN;
    END IF;
    IF v_lease <= 0 THEN
        v_lease := 60;
    END IF;
    v_wanted := v_committed + 1;
    -- A redelivery starts at the same offset as the previous delivery.
    v_attempt := CASE WHEN v_attempt_offset = v_wanted THEN v_attempt_count + 1 ELSE 1 END;
    attempt := CASE WHEN p_auto_ack THEN 1 ELSE v_attempt END;

    IF v_window > 0 THEN
        SELECT s.created_at INTO v_newest FROM queen.log_segments s
        WHERE s.partition_id = p_partition_id ORDER BY s.base_offset DESC LIMIT 1;
        IF v_newest IS NOT NULL AND v_newest > v_now - make_interval(secs => v_window) THEN
            RETURN;
        END IF;
    END IF;

    IF v_conflate THEN
        -- The newest segment; past the cursor at all (visible or not) it rules out the seal below.
        SELECT s.base_offset, s.end_offset, s.created_at, s.blob INTO r FROM queen.log_segments s
         WHERE s.partition_id = p_partition_id
         ORDER BY s.base_offset DESC LIMIT 1;
        IF FOUND THEN
            v_any := r.end_offset >= v_wanted;
        END IF;
        v_visible := v_any;
        IF v_any AND v_delayed > 0 AND r.created_at > v_now - make_interval(secs => v_delayed) THEN
            -- Still delayed: the newest segment old enough instead, if any.
            SELECT s.base_offset, s.end_offset, s.created_at, s.blob INTO r FROM queen.log_segments s
             WHERE s.partition_id = p_partition_id AND s.created_at <= v_now - make_interval(secs => v_delayed)
             ORDER BY s.base_offset DESC LIMIT 1;
            v_visible := false;
            IF FOUND THEN
                v_visible := r.end_offset >= v_wanted;
            END IF;
        END IF;
        IF v_visible THEN
            seq := r.base_offset;
            start_off := (r.end_offset - r.base_offset)::integer;
            take := 1;
            msg_count := (r.end_offset - r.base_offset + 1)::integer;
            created_at := r.created_at;
            blob := r.blob;
            v_taken := 1;
            v_end := r.end_offset;
            RETURN NEXT;
        END IF;
        v_remaining := 0;
    END IF;

    -- Head: the segment that covers the wanted offset, from the wanted frame.
    FOR r IN SELECT s.base_offset, s.end_offset, s.created_at, s.blob FROM queen.log_segments s
             WHERE NOT v_conflate AND s.partition_id = p_partition_id AND s.base_offset <= v_wanted
             ORDER BY s.base_offset DESC LIMIT 1 LOOP
        IF r.end_offset >= v_wanted THEN
            v_any := true;
            IF v_delayed = 0 OR r.created_at <= v_now - make_interval(secs => v_delayed) THEN
                seq := r.base_offset;
                start_off := (v_wanted - r.base_offset)::integer;
                take := LEAST(r.end_offset - v_wanted + 1, v_remaining)::integer;
                msg_count := (r.end_offset - r.base_offset + 1)::integer;
                created_at := r.created_at;
                blob := r.blob;
                v_remaining := v_remaining - take;
                v_taken := v_taken + take;
                v_end := seq + start_off + take - 1;
                RETURN NEXT;
            ELSE
                v_remaining := 0;
            END IF;
        END IF;
    END LOOP;

    -- Forward: later segments from frame 0 until the budget is spent; a gap
    -- left by retention is skipped silently.
    IF v_remaining > 0 THEN
        FOR r IN SELECT s.base_offset, s.end_offset, s.created_at, s.blob FROM queen.log_segments s
                 WHERE s.partition_id = p_partition_id AND s.base_offset > v_wanted
                 ORDER BY s.base_offset LIMIT v_remaining LOOP
            v_any := true;
            EXIT WHEN v_delayed > 0 AND r.created_at > v_now - make_interval(secs => v_delayed);
            seq := r.base_offset;
            start_off := 0;
            take := LEAST(r.end_offset - r.base_offset + 1, v_remaining)::integer;
            msg_count := (r.end_offset - r.base_offset + 1)::integer;
            created_at := r.created_at;
            blob := r.blob;
            v_remaining := v_remaining - take;
            v_taken := v_taken + take;
            v_end := seq + take - 1;
            RETURN NEXT;
            EXIT WHEN v_remaining <= 0;
        END LOOP;
    END IF;

    IF v_taken = 0 THEN
        IF NOT v_any THEN
            -- Retention removed everything past the cursor: seal it at the end.
            UPDATE queen.log_consumers c SET committed = v_last
             WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group;
        END IF;
        RETURN;
    END IF;

    IF p_auto_ack THEN
        UPDATE queen.log_consumers c
           SET committed = v_end, total_consumed = c.total_consumed + v_taken,
               worker_id = NULL, lease_expires_at = NULL, batch_end = NULL, lease_conflated = false
         WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group;
    ELSE
        UPDATE queen.log_consumers c
           SET worker_id = p_worker_id,
               lease_expires_at = v_now + make_interval(secs => v_lease),
               lease_acquired_at = v_now,
               batch_end = v_end,
               attempt_offset = v_wanted,
               attempt_count = v_attempt,
               lease_conflated = v_conflate
         WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group;
    END IF;
    RETURN;
END;
$$;
