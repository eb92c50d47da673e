-- =============================================================================
-- 003_log_push : the write path.
--
-- log_provision_v1 creates a queue and partition on first use. log_push_one_v1
-- is the ONLY place in the system where offsets are allocated: the push route,
-- the transaction wire and (later) the streams sink all call it. It runs under
-- the partition row lock, so offsets are dense and created_at is monotone in
-- offset order. Callers that write several partitions in one transaction lock
-- them first in ascending id order (log_lock_partitions_v1), as the one lock
-- order says (broker/DESIGN.md, Lock order).
-- =============================================================================

-- Queue identity is (tenant, name); namespace/task come from the dotted name
-- ("ns.task.rest"). A name without a dot gets empty namespace and task: the
-- reference leaves this case unstated, and empty keeps discovery pops by
-- namespace from matching every undotted queue.
-- Also returns the queue options the push path needs, saving a round trip.
DROP FUNCTION IF EXISTS queen.log_provision_v1(uuid, text, text);
CREATE FUNCTION queen.log_provision_v1(p_tenant uuid, p_queue text, p_partition text)
RETURNS TABLE (queue_id uuid, partition_id uuid, dedup_window_seconds integer, encryption_enabled boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_queue uuid;
    v_partition uuid;
BEGIN
    SELECT q.id INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
    IF v_queue IS NULL THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        VALUES (p_tenant, p_queue,
                CASE WHEN strpos(p_queue, '.') > 0 THEN split_part(p_queue, '.', 1) ELSE '' END,
                CASE WHEN strpos(p_queue, '.') > 0 THEN split_part(p_queue, '.', 2) ELSE '' END)
        ON CONFLICT (tenant_id, name) DO NOTHING
        RETURNING id INTO v_queue;
        IF v_queue IS NULL THEN
            SELECT q.id INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
        END IF;
    END IF;
    IF p_partition IS NULL THEN
        RETURN QUERY SELECT v_queue, NULL::uuid, q.dedup_window_seconds, COALESCE(q.encryption_enabled, false)
                     FROM queen.queues q WHERE q.id = v_queue;
        RETURN;
    END IF;
    SELECT lp.id INTO v_partition FROM queen.log_partitions lp WHERE lp.queue_id = v_queue AND lp.name = p_partition;
    IF v_partition IS NULL THEN
        INSERT INTO queen.log_partitions (queue_id, name) VALUES (v_queue, p_partition)
        ON CONFLICT (queue_id, name) DO NOTHING
        RETURNING id INTO v_partition;
        IF v_partition IS NULL THEN
            SELECT lp.id INTO v_partition FROM queen.log_partitions lp
            WHERE lp.queue_id = v_queue AND lp.name = p_partition;
        END IF;
    END IF;
    RETURN QUERY SELECT v_queue, v_partition, q.dedup_window_seconds, COALESCE(q.encryption_enabled, false)
                 FROM queen.queues q WHERE q.id = v_queue;
END;
$$;

-- Creates the named partitions of a queue that do not exist yet, in ONE insert,
-- and returns every named partition with the queue's options (the queue itself
-- is provisioned as by log_provision_v1). One statement is one firing of the
-- partitions-created counter (020): the queue's minute row is bumped once by
-- the number created, where a call per partition took that row's lock once each
-- and concurrent creators queued behind every one of those commits. Names go in
-- ascending order (broker/DESIGN.md, Lock order), in code point order (COLLATE
-- "C"), which is how the broker sorts them on the transaction route (Java's
-- order differs only between characters beyond U+FFFF and U+E000..U+FFFF).
CREATE OR REPLACE FUNCTION queen.log_provision_partitions_v1(p_tenant uuid, p_queue text, p_partitions text[])
RETURNS TABLE (queue_id uuid, partition_id uuid, partition_name text, dedup_window_seconds integer,
               encryption_enabled boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_queue uuid;
    v_window integer;
    v_encrypted boolean;
BEGIN
    SELECT q.queue_id, q.dedup_window_seconds, q.encryption_enabled INTO v_queue, v_window, v_encrypted
    FROM queen.log_provision_v1(p_tenant, p_queue, NULL) q;
    INSERT INTO queen.log_partitions (queue_id, name)
    SELECT v_queue, d.n FROM (SELECT DISTINCT unnest(p_partitions) AS n) d ORDER BY d.n COLLATE "C"
    ON CONFLICT (queue_id, name) DO NOTHING;
    RETURN QUERY SELECT v_queue, lp.id, lp.name, v_window, v_encrypted
                 FROM queen.log_partitions lp
                 WHERE lp.queue_id = v_queue AND lp.name = ANY (p_partitions);
END;
$$;

-- Locks the given partitions in ascending id order (every multi-partition
-- writer takes them so: broker/DESIGN.md, Lock order). Returns the ids it
-- locked; a missing id (partition cleaned up meanwhile) is simply absent.
CREATE OR REPLACE FUNCTION queen.log_lock_partitions_v1(p_partition_ids uuid[])
RETURNS SETOF uuid
LANGUAGE sql AS $$
    SELECT lp.id FROM queen.log_partitions lp
    WHERE lp.id = ANY (p_partition_ids)
    ORDER BY lp.id
    FOR UPDATE
$$;

-- Appends one segment of p_count frames. With p_probe and a positive dedup
-- window (p_dedup_window_seconds, or the queue's when NULL), any incoming hash
-- already stored in this partition inside the window
-- makes the whole segment a duplicate: nothing is written and the original
-- offsets are returned ({"status":"duplicate","dups":[{"i":idx,"off":offset}]}),
-- for the broker to report and to re-push the rest. Otherwise:
-- {"status":"queued","baseOffset":B,"createdAt":ts}.
-- The broker's dedup cache vouches for the sidecar rows it wrote itself,
-- contiguously, in [p_vouched_from, p_vouched_to]; the probe skips those rows
-- (the reference's p_verified watermark). NULLs vouch for nothing.
-- When no probe is needed the allocation and both inserts are one statement
-- (about 10% less PostgreSQL CPU a call than lock, update and two inserts, by
-- pgbench with small blobs); everything else takes the general path.
DROP FUNCTION IF EXISTS queen.log_push_one_v1(uuid, integer, bytea, bytea, integer, boolean);
CREATE OR REPLACE FUNCTION queen.log_push_one_v1(
    p_partition_id uuid,
    p_count integer,
    p_blob bytea,
    p_hashes bytea,
    p_dedup_window_seconds integer,
    p_probe boolean,
    p_vouched_from bigint,
    p_vouched_to bigint)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_base bigint;
    v_last bigint;
    v_txns_start bigint;
    v_window integer;
    v_now timestamptz;
    v_since timestamptz;
    v_before_end bigint;
    v_before boolean := false;
    v_after boolean := false;
    v_dups jsonb;
BEGIN
    IF p_count < 1 OR length(p_hashes) <> p_count * 16 THEN
        RAISE EXCEPTION 'log_push_one_v1: % frames but % hash bytes', p_count, length(p_hashes)
            USING ERRCODE = '22023';
    END IF;

    -- Fast path, one statement: when no probe can find anything (none asked for, or both ranges
    -- around the vouched block are empty, see below) and the partition already holds live rows
    -- (so the oldest_* stamps stay as they are), the UPDATE itself allocates the offsets, with no
    -- separate lock, queue join or window read. A concurrent writer makes it re-check its WHERE
    -- on the newer row (and re-stamp last_write_at); when that no longer holds, nothing was
    -- written and the general path below takes over. created_at is read after the update, under
    -- the row lock, so it still follows offset order.
    IF NOT p_probe OR p_vouched_from IS NOT NULL THEN
        WITH moved AS (
            UPDATE queen.log_partitions lp
               SET last_offset = lp.last_offset + p_count,
                   last_write_at = GREATEST(lp.last_write_at, date_trunc('second', clock_timestamp()))
             WHERE lp.id = p_partition_id
               AND lp.oldest_live_at IS NOT NULL AND lp.oldest_txn_at IS NOT NULL
               AND (NOT p_probe OR (lp.txns_start >= p_vouched_from AND lp.last_offset <= p_vouched_to))
            RETURNING lp.last_offset - p_count + 1 AS base, clock_timestamp() AS at
        ), segment AS (
            INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
            SELECT p_partition_id, m.base, m.base + p_count - 1, m.at, p_blob FROM moved m
        )
        INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
        SELECT p_partition_id, m.base, m.base + p_count - 1, m.at, p_hashes FROM moved m
        RETURNING base_offset, created_at INTO v_base, v_now;
        IF FOUND THEN
            RETURN jsonb_build_object('status', 'queued', 'baseOffset', v_base, 'createdAt', v_now);
        END IF;
    END IF;

    SELECT lp.last_offset, lp.txns_start, q.dedup_window_seconds INTO v_last, v_txns_start, v_window
    FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id
    WHERE lp.id = p_partition_id
    FOR UPDATE OF lp;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition % not found', p_partition_id USING ERRCODE = 'P0002';
    END IF;
    -- NULL = the queue's current setting, read under the lock (the broker's cache may be stale).
    v_window := COALESCE(p_dedup_window_seconds, v_window);

    IF p_probe AND v_window > 0 THEN
        v_since := now() - make_interval(secs => v_window);
        -- Candidates: the partition's live hash rows inside the window, minus the vouched block.
        -- Live rows have base_offset in [txns_start, last]: purges are prefix-contiguous. Every
        -- range below is bounded on both sides and every pre-check is an ORDER BY ... LIMIT 1 on
        -- the primary key, so no plan (generic ones included, whose estimates know no values)
        -- can turn a probe into a scan of the whole table. created_at grows with the offset, so
        -- the newest row of a range says whether any of it is inside the window.
        -- Offsets are dense, so an empty range needs no lookup: nothing before the vouched block
        -- once retention reached it, and nothing after it while the partition's last offset is
        -- the block's end (no other broker wrote since), the usual case of a partition written
        -- by one broker.
        v_before_end := COALESCE(p_vouched_from, v_last + 1);
        IF v_before_end > v_txns_start THEN
            SELECT t.created_at >= v_since INTO v_before
            FROM queen.log_txns t
            WHERE t.partition_id = p_partition_id AND t.base_offset >= v_txns_start AND t.base_offset < v_before_end
            ORDER BY t.base_offset DESC LIMIT 1;
        END IF;
        IF p_vouched_from IS NOT NULL AND v_last > p_vouched_to THEN
            SELECT t.base_offset > p_vouched_to INTO v_after
            FROM queen.log_txns t
            WHERE t.partition_id = p_partition_id AND t.base_offset >= v_txns_start AND t.base_offset <= v_last
            ORDER BY t.base_offset DESC LIMIT 1;
        END IF;
        IF v_before OR v_after THEN
            -- A row is unnested only when some incoming hash occurs in its bytes: position() is a
            -- byte search in C, where unnesting every row of the window built a tuple per stored
            -- hash (a push of 10 over a partition's hour, 36,000 hashes in rows of 10: 5 ms against
            -- 31). A match across two stored hashes only costs that row's unnest. MATERIALIZED
            -- keeps the planner from unnesting every row before the filter.
            WITH candidates AS MATERIALIZED (
                SELECT n.idx, n.hash, w.base_offset, w.hashes
                FROM queen.log_unnest_hashes(p_hashes) n
                JOIN (
                    SELECT t.base_offset, t.hashes FROM queen.log_txns t
                    WHERE v_before
                      AND t.partition_id = p_partition_id
                      AND t.base_offset >= v_txns_start AND t.base_offset < v_before_end
                      AND t.created_at >= v_since
                    UNION ALL
                    SELECT t.base_offset, t.hashes FROM queen.log_txns t
                    WHERE v_after
                      AND t.partition_id = p_partition_id
                      AND t.base_offset > p_vouched_to AND t.base_offset <= v_last
                ) w ON position(n.hash IN w.hashes) > 0
            )
            SELECT jsonb_agg(jsonb_build_object('i', d.idx, 'off', d.off) ORDER BY d.idx) INTO v_dups
            FROM (
                SELECT c.idx, min(c.base_offset + o.idx) AS off
                FROM candidates c
                CROSS JOIN LATERAL queen.log_unnest_hashes(c.hashes) o
                WHERE o.hash = c.hash
                GROUP BY c.idx
            ) d;
        END IF;
        IF v_dups IS NOT NULL THEN
            RETURN jsonb_build_object('status', 'duplicate', 'dups', v_dups);
        END IF;
    END IF;

    -- Stamped after the row lock so created_at follows offset order.
    v_now := clock_timestamp();
    UPDATE queen.log_partitions
       SET last_offset = v_last + p_count,
           last_write_at = GREATEST(last_write_at, date_trunc('second', v_now)),
           oldest_live_at = COALESCE(oldest_live_at, v_now),
           oldest_txn_at = COALESCE(oldest_txn_at, v_now)
     WHERE id = p_partition_id;
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
    VALUES (p_partition_id, v_last + 1, v_last + p_count, v_now, p_blob);
    INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
    VALUES (p_partition_id, v_last + 1, v_last + p_count, v_now, p_hashes);
    RETURN jsonb_build_object('status', 'queued', 'baseOffset', v_last + 1, 'createdAt', v_now);
END;
$$;
