-- =============================================================================
-- 032_log_fetch : POST /api/v1/fetch, a batched read from absolute offsets.
--
-- queen.log_fetch_v1 reads, for each (queue, partition, offset) entry of one
-- tenant, the segments holding that offset onward. It is not a pop: no lease,
-- no cursor row read or written, no claim, nothing locked; two callers asking
-- for the same offsets get the same records. STABLE, read-only, two indexed
-- reads per entry plus a primary-key range walk of log_segments that stops at
-- the first bound.
--
-- One row per delivered segment, and one row with NULL segment columns for an
-- entry that delivers nothing; `entry` is the 0-based index in the request,
-- rows come in entry order and, within an entry, in offset order. Every row
-- of an entry carries its bounds: `high` (the next offset to be written,
-- last_offset + 1) and `log_start` (the first offset retention kept), so an
-- empty answer doubles as a bounds probe.
--
-- Offsets follow Kafka's rule: below log_start or above high is
-- OFFSET_OUT_OF_RANGE (retention passed the caller, or the caller asks for
-- what was never written: neither is served as "empty", which would hide it);
-- offset = high is valid and empty (a caught-up reader). A queue the tenant
-- does not have is UNKNOWN_TOPIC_OR_PARTITION, the same answer whether it
-- exists for another tenant or nowhere. A partition nothing was pushed to yet
-- of an existing queue is an empty log (high 0, log_start 0).
--
-- Bounds, all given by the broker, which clamps them: p_max_bytes[i] per
-- entry and p_budget for the whole call, both in compressed segment bytes, and
-- p_max_records frames per entry. The first segment of the whole call is
-- exempt from all three, so a segment larger than every bound is still
-- delivered rather than stalling its reader for ever; only the first of the
-- call, or 1,000 entries could each claim one and the call budget would mean
-- nothing.
-- =============================================================================
CREATE OR REPLACE FUNCTION queen.log_fetch_v1(
    p_tenant uuid,
    p_queues text[],
    p_partitions text[],
    p_offsets bigint[],
    p_max_bytes integer[],
    p_budget bigint,
    p_max_records integer)
RETURNS TABLE (entry integer, error text, high bigint, log_start bigint,
               base_offset bigint, start_idx integer, take integer, created_at timestamptz, blob bytea)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_n integer := COALESCE(array_length(p_queues, 1), 0);
    v_queue uuid;
    v_partition uuid;
    v_last bigint;
    v_start bigint;
    v_wanted bigint;
    v_from bigint;
    v_budget bigint := GREATEST(COALESCE(p_budget, 0), 0);
    v_cap integer := GREATEST(COALESCE(p_max_records, 1), 1);
    v_max_bytes bigint;
    v_taken integer;
    v_bytes bigint;
    v_any boolean := false;
    v_delivered boolean;
    v_skip integer;
    v_take integer;
    r record;
BEGIN
    -- Arrays out of step would answer one partition's bounds for another's.
    IF v_n > 0 AND (array_length(p_partitions, 1) IS DISTINCT FROM v_n
                    OR array_length(p_offsets, 1) IS DISTINCT FROM v_n
                    OR array_length(p_max_bytes, 1) IS DISTINCT FROM v_n) THEN
        RAISE EXCEPTION 'log_fetch_v1: % queues but partitions, offsets and max bytes differ in length', v_n
            USING ERRCODE = '22023';
    END IF;

    FOR v_i IN 1..v_n LOOP
        entry := v_i - 1;
        error := NULL;
        base_offset := NULL; start_idx := NULL; take := NULL; created_at := NULL; blob := NULL;

        SELECT q.id INTO v_queue FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queues[v_i];
        IF NOT FOUND THEN
            error := 'UNKNOWN_TOPIC_OR_PARTITION';
            high := 0;
            log_start := 0;
            RETURN NEXT;
            CONTINUE;
        END IF;
        SELECT p.id, p.last_offset, p.log_start INTO v_partition, v_last, v_start
          FROM queen.log_partitions p
         WHERE p.queue_id = v_queue AND p.name = p_partitions[v_i];
        IF NOT FOUND THEN
            v_partition := NULL;
            v_last := -1;
            v_start := 0;
        END IF;
        high := v_last + 1;
        log_start := v_start;
        v_wanted := p_offsets[v_i];
        IF v_wanted IS NULL OR v_wanted < v_start OR v_wanted > v_last + 1 THEN
            error := 'OFFSET_OUT_OF_RANGE';
            RETURN NEXT;
            CONTINUE;
        END IF;

        v_delivered := false;
        IF v_wanted <= v_last THEN
            v_taken := 0;
            v_bytes := 0;
            v_max_bytes := GREATEST(COALESCE(p_max_bytes[v_i], 0), 1);
            -- One backward primary-key step finds the segment at or below the
            -- offset; it covers the offset or ends before it (then the next one
            -- starts above it). Filtering on end_offset has no index to use.
            SELECT s.base_offset INTO v_from FROM queen.log_segments s
             WHERE s.partition_id = v_partition AND s.base_offset <= v_wanted
             ORDER BY s.base_offset DESC LIMIT 1;
            v_from := COALESCE(v_from, v_wanted);
            FOR r IN SELECT s.base_offset, s.end_offset, s.created_at, s.blob FROM queen.log_segments s
                      WHERE s.partition_id = v_partition AND s.base_offset >= v_from
                      ORDER BY s.base_offset LOOP
                CONTINUE WHEN r.end_offset < v_wanted;
                EXIT WHEN v_any AND (v_bytes >= v_max_bytes OR v_budget <= 0 OR v_taken >= v_cap);
                v_skip := GREATEST(v_wanted - r.base_offset, 0)::integer;
                v_take := LEAST((r.end_offset - r.base_offset + 1 - v_skip)::integer, v_cap - v_taken);
                CONTINUE WHEN v_take <= 0;
                base_offset := r.base_offset;
                start_idx := v_skip;
                take := v_take;
                created_at := r.created_at;
                blob := r.blob;
                RETURN NEXT;
                v_delivered := true;
                v_any := true;
                v_taken := v_taken + v_take;
                v_bytes := v_bytes + octet_length(r.blob);
                -- Spent in entry order: a later entry may come back empty with its bounds.
                v_budget := GREATEST(v_budget - octet_length(r.blob), 0);
            END LOOP;
        END IF;
        IF NOT v_delivered THEN
            base_offset := NULL; start_idx := NULL; take := NULL; created_at := NULL; blob := NULL;
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;
