-- =============================================================================
-- 033_log_partitions_changed : POST /api/v1/partitions/changed
-- (the reference broker's newest partition listing), the partition discovery
-- of the S3 sink.
--
-- queen.log_partitions_changed_v1 answers, per queue of one tenant, which
-- partitions exist (since NULL: every partition, by name) or which were
-- written at or after `since` (by last_write_at, then name), a page at a time,
-- with each partition's lastOffset / logStart / lastWriteAt, plus one
-- safeTime for the whole call. It reads queen.queues, queen.log_partitions
-- and pg_stat_activity, takes no lock and writes nothing.
--
-- safeTime: no segment committed later can carry a created_at at or below it.
-- created_at is stamped inside the inserting transaction, so it is never
-- older than that transaction's xact_start; the oldest xact_start of the
-- in-transaction client sessions, capped at now() - guard, is therefore a
-- floor. A session whose activity row is masked (another role, no
-- pg_read_all_stats: state and xact_start read NULL) could hide an old
-- transaction, so one such row degrades the answer to now() - floor and says
-- so with safeTimeDegraded.
--
-- VOLATILE although it writes nothing: each statement then takes its own
-- snapshot, so the partition scans observe the database strictly after the
-- pg_stat_activity read that produced safeTime. That read is therefore the
-- first statement. With a snapshot shared by the whole call (STABLE), a
-- transaction committing between the snapshot and the activity read would be
-- in neither, and a sink could close a window below its rows. The guarantee
-- needs READ COMMITTED; the broker calls this as one autocommit statement.
--
-- Paging: `next` is an opaque cursor, non-null only when the page is full.
-- It is tagged by mode so a cursor of one sweep sent with the other is a
-- per-entry BAD_CURSOR instead of a wrong page:
--   enumeration: 'n|' || name
--   since mode : 't|' || last_write_at as epoch microseconds || '|' || name
-- last_write_at only moves forward, so a partition written between two pages
-- reappears later in the sweep; it can never fall behind the cursor.
-- A queue of another tenant is UNKNOWN_TOPIC_OR_PARTITION, exactly like a
-- queue that exists nowhere. limits are clamped to 1..1000 here too.
-- =============================================================================
DROP FUNCTION IF EXISTS queen.log_partitions_changed_v1(text[], timestamptz[], text[], integer[], integer, integer, uuid);
CREATE FUNCTION queen.log_partitions_changed_v1(
    p_queues text[],
    p_since timestamptz[],
    p_after text[],
    p_limits integer[],
    p_guard_seconds integer,
    p_floor_seconds integer,
    p_tenant uuid)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_safe timestamptz;
    v_masked bigint;
    v_degraded boolean := false;
    v_n integer := COALESCE(array_length(p_queues, 1), 0);
    v_entries jsonb := '[]'::jsonb;
    v_queue_id uuid;
    v_since timestamptz;
    v_after text;
    v_limit integer;
    v_cursor_at timestamptz;
    v_cursor_name text;
    v_rest text;
    v_bar integer;
    v_parts jsonb;
    v_count integer;
    v_next text;
    r record;
BEGIN
    -- First statement, on purpose (see the header). Client backends only;
    -- a NULL backend_type is kept so a masked row can never be filtered out.
    WITH sessions AS (
        SELECT a.xact_start, a.state
          FROM pg_stat_activity a
         WHERE a.pid <> pg_backend_pid()
           AND (a.backend_type = 'client backend' OR a.backend_type IS NULL)
    )
    SELECT LEAST(now() - make_interval(secs => GREATEST(COALESCE(p_guard_seconds, 5), 0)),
                 COALESCE((SELECT min(s.xact_start) FROM sessions s), now())),
           (SELECT count(*) FROM sessions s WHERE s.state IS NULL AND s.xact_start IS NULL)
      INTO v_safe, v_masked;
    IF v_masked > 0 THEN
        v_safe := now() - make_interval(secs => GREATEST(COALESCE(p_floor_seconds, 30), 0));
        v_degraded := true;
    END IF;

    -- Misaligned arrays are a broker bug; padding them would answer one queue under another's name.
    IF COALESCE(array_length(p_since, 1), 0) <> v_n OR COALESCE(array_length(p_after, 1), 0) <> v_n
       OR COALESCE(array_length(p_limits, 1), 0) <> v_n THEN
        RAISE EXCEPTION 'log_partitions_changed_v1: misaligned arrays for % queues', v_n USING ERRCODE = '22023';
    END IF;

    FOR i IN 1 .. v_n LOOP
        SELECT q.id INTO v_queue_id FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queues[i];
        IF NOT FOUND THEN
            v_entries := v_entries || jsonb_build_array(
                jsonb_build_object('queue', p_queues[i], 'error', 'UNKNOWN_TOPIC_OR_PARTITION'));
            CONTINUE;
        END IF;

        v_since := p_since[i];
        v_after := NULLIF(p_after[i], '');
        v_limit := LEAST(GREATEST(COALESCE(p_limits[i], 1000), 1), 1000);
        v_cursor_at := NULL;
        v_cursor_name := NULL;
        IF v_after IS NOT NULL THEN
            IF v_since IS NULL AND left(v_after, 2) = 'n|' THEN
                v_cursor_name := substr(v_after, 3);
            ELSIF v_since IS NOT NULL AND left(v_after, 2) = 't|' THEN
                v_rest := substr(v_after, 3);
                v_bar := position('|' IN v_rest);
                IF v_bar > 1 AND left(v_rest, v_bar - 1) ~ '^[0-9]{1,18}$' THEN
                    v_cursor_at := to_timestamp(left(v_rest, v_bar - 1)::numeric / 1000000);
                    v_cursor_name := substr(v_rest, v_bar + 1);
                END IF;
            END IF;
            IF v_cursor_name IS NULL THEN
                v_entries := v_entries || jsonb_build_array(
                    jsonb_build_object('queue', p_queues[i], 'error', 'BAD_CURSOR'));
                CONTINUE;
            END IF;
        END IF;

        v_parts := '[]'::jsonb;
        v_count := 0;
        v_next := NULL;
        IF v_since IS NULL THEN
            -- Enumeration through UNIQUE (queue_id, name).
            FOR r IN
                SELECT p.name, p.last_offset, p.log_start, p.last_write_at
                  FROM queen.log_partitions p
                 WHERE p.queue_id = v_queue_id
                   AND (v_cursor_name IS NULL OR p.name > v_cursor_name)
                 ORDER BY p.name
                 LIMIT v_limit
            LOOP
                v_parts := v_parts || jsonb_build_array(jsonb_build_object(
                    'name', r.name, 'lastOffset', r.last_offset, 'logStart', r.log_start,
                    'lastWriteAt', to_char(r.last_write_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
                v_count := v_count + 1;
                v_next := 'n|' || r.name;
            END LOOP;
        ELSE
            -- What moved, through idx_log_partitions_queue_write; the range
            -- starts at the later of `since` and the cursor's time.
            FOR r IN
                SELECT p.name, p.last_offset, p.log_start, p.last_write_at
                  FROM queen.log_partitions p
                 WHERE p.queue_id = v_queue_id
                   AND p.last_write_at >= GREATEST(v_since, COALESCE(v_cursor_at, v_since))
                   AND (v_cursor_at IS NULL OR (p.last_write_at, p.name) > (v_cursor_at, v_cursor_name))
                 ORDER BY p.last_write_at, p.name
                 LIMIT v_limit
            LOOP
                v_parts := v_parts || jsonb_build_array(jsonb_build_object(
                    'name', r.name, 'lastOffset', r.last_offset, 'logStart', r.log_start,
                    'lastWriteAt', to_char(r.last_write_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
                v_count := v_count + 1;
                -- Microseconds: the column's own resolution, so two rows never share a cursor key.
                v_next := 't|' || trunc(EXTRACT(EPOCH FROM r.last_write_at) * 1000000)::bigint::text || '|' || r.name;
            END LOOP;
        END IF;
        IF v_count < v_limit THEN
            v_next := NULL;
        END IF;
        v_entries := v_entries || jsonb_build_array(
            jsonb_build_object('queue', p_queues[i], 'partitions', v_parts, 'next', v_next));
    END LOOP;

    RETURN jsonb_build_object(
        'safeTime', to_char(v_safe AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'safeTimeDegraded', v_degraded,
        'entries', v_entries);
END;
$$;
