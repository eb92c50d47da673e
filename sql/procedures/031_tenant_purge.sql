-- =============================================================================
-- 031_tenant_purge : queen.delete_tenant_data_v1, the broker half of a tenant
-- wipe (broker/DESIGN.md, Tenancy). Called through
-- POST /api/v1/system/tenants/:tenantId/purge by the Kubernetes operator's
-- Tenant finalizer, one call per HTTP request, each call its own transaction,
-- repeated until the answer says done.
--
-- Bounded work per call. A plpgsql function holds every row lock it takes
-- until the caller commits, so what keeps a wipe of a large tenant from
-- stalling a live cell is the size of one call: p_max_queues queue deletes and
-- at most p_max_rows rows per table per call. Every bounded delete picks its
-- rows as ctid = ANY (ARRAY(SELECT ctid ... LIMIT n FOR UPDATE SKIP LOCKED)):
-- ARRAY() is evaluated once, so LIMIT really bounds the statement (an IN
-- sub-select may be re-run per outer row), and SKIP LOCKED leaves a row some
-- other session holds to a later call instead of waiting for it.
--
-- Phases, each resumable, none relying on an earlier call having finished:
--   timers        queen.log_timers first: a timer that fires into a deleted
--                 queue would create it again.
--   queue-residue for each queue (ascending id, p_max_queues per call), the
--                 rows that name its partitions without a foreign key and so
--                 outlive a queue delete: message_traces (with their names),
--                 retention_history, queen_streams.state. They are purged
--                 while the partition ids that attribute them still exist;
--                 the call stops before deleting a queue that still has some.
--   queues        queen.delete_queue_v1 (013) per queue: log_txns and log_dlq,
--                 then the queues row, whose cascade takes partitions,
--                 segments, cursors, watermarks, queue-scoped group metadata,
--                 lag metrics and stats. Until no queue is left, the sweep
--                 waits: live queues keep writing some of the swept tables.
--   sweep         every other table keyed by tenant_id, bounded per table.
--   complete      nothing of the tenant is left in any table of the list.
--
-- Lock order (broker/DESIGN.md, Lock order). The only statements here that can
-- wait are delete_queue_v1's; they run after the timer rows (log_timers before
-- queues, as the order says) and before the sweep, on a queue whose row this
-- call took first (SKIP LOCKED), before that queue's residue. The kv rows taken by the
-- sweep come after queue locks, but the sweep is SKIP LOCKED throughout and
-- nothing after it waits, so this actor never waits while holding them: no
-- cycle through it.
--
-- Coverage is checked, not assumed: a table of schema queen or queen_streams
-- with a tenant_id column that is not in C_TENANT_TABLES makes every call
-- raise, because a purge that reports done while data is left behind is the
-- one failure it must not have. A listed table absent from the database is
-- skipped.
--
-- The body is plpgsql so names resolve at run time: delete_queue_v1 is
-- defined in 013 and only needs to exist when a call runs.
-- =============================================================================

CREATE OR REPLACE FUNCTION queen.delete_tenant_data_v1(
    p_tenant               uuid,
    p_max_queues           integer DEFAULT 10,
    p_max_rows             integer DEFAULT 20000,
    p_allow_default_tenant boolean DEFAULT false
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    -- Every table of queen / queen_streams with a tenant_id column, in the
    -- order of the phases. queen.queues and queen.log_timers have their own
    -- phases; the rest is the sweep.
    C_TENANT_TABLES CONSTANT text[] := ARRAY[
        'queen.log_timers',
        'queen.queues',
        'queen.consumer_groups_metadata',
        'queen.hotlist_repairs',
        'queen.queue_parked_replica',
        'queen.kv',
        'queen.kv_quota',
        'queen.kv_usage',
        'queen.ephemeral_queues',
        'queen.ephemeral_quota',
        'queen_streams.queries',
        'queen_streams.quota'
    ];
    C_DEFAULT_TENANT CONSTANT uuid := '00000000-0000-0000-0000-000000000001';

    v_missing   text[];
    v_table     text;
    v_rel       regclass;
    v_count     bigint;
    v_rows      jsonb := jsonb_build_object('queen.message_traces', 0,
                                            'queen.retention_history', 0,
                                            'queen_streams.state', 0);
    v_deleted   integer := 0;
    v_remaining bigint;
    v_left      boolean;
    v_queue     record;
    v_parts     uuid[];
    -- Residue budgets are per call and per table, spent across the queues.
    v_budget_traces    integer := p_max_rows;
    v_budget_retention integer := p_max_rows;
    v_budget_state     integer := p_max_rows;
    v_streams   boolean := to_regclass('queen_streams.state') IS NOT NULL;
BEGIN
    IF p_tenant IS NULL THEN
        RAISE EXCEPTION 'delete_tenant_data_v1: a tenant is required' USING ERRCODE = '22004';
    END IF;
    IF p_tenant = C_DEFAULT_TENANT AND NOT COALESCE(p_allow_default_tenant, false) THEN
        RAISE EXCEPTION 'delete_tenant_data_v1: refusing to purge the default tenant %; it holds every '
                        'pre-tenancy caller''s data (pass p_allow_default_tenant => true to mean it)',
                        C_DEFAULT_TENANT USING ERRCODE = '22023';
    END IF;
    IF p_max_queues IS NULL OR p_max_queues < 1 OR p_max_rows IS NULL OR p_max_rows < 1 THEN
        RAISE EXCEPTION 'delete_tenant_data_v1: p_max_queues and p_max_rows must be at least 1 (got %, %)',
                        p_max_queues, p_max_rows USING ERRCODE = '22023';
    END IF;

    -- Coverage, read from pg_catalog (information_schema hides tables the
    -- role cannot see, which would read as covered).
    SELECT array_agg(format('%s.%s', ns.nspname, c.relname) ORDER BY ns.nspname, c.relname)
      INTO v_missing
      FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
      JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
     WHERE ns.nspname IN ('queen', 'queen_streams')
       AND c.relkind IN ('r', 'p')
       AND a.attname = 'tenant_id'
       AND a.attnum > 0
       AND NOT a.attisdropped
       AND NOT (format('%s.%s', ns.nspname, c.relname) = ANY (C_TENANT_TABLES));
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'delete_tenant_data_v1: % carry tenant_id but are not purged by this function; '
                        'add them to C_TENANT_TABLES in 031_tenant_purge.sql',
                        array_to_string(v_missing, ', ') USING ERRCODE = '55000';
    END IF;

    -- ---------------------------------------------------------------- timers
    DELETE FROM queen.log_timers
     WHERE ctid = ANY (ARRAY(SELECT t.ctid FROM queen.log_timers t
                              WHERE t.tenant_id = p_tenant
                              LIMIT p_max_rows
                              FOR UPDATE SKIP LOCKED));
    GET DIAGNOSTICS v_count = ROW_COUNT;
    v_rows := v_rows || jsonb_build_object('queen.log_timers', v_count);
    IF EXISTS (SELECT 1 FROM queen.log_timers WHERE tenant_id = p_tenant) THEN
        RETURN jsonb_build_object(
            'tenant', p_tenant, 'done', false, 'phase', 'timers',
            'queues', jsonb_build_object(
                'deleted', 0,
                'remaining', (SELECT count(*) FROM queen.queues WHERE tenant_id = p_tenant)),
            'rows', v_rows);
    END IF;

    -- ---------------------------------------------------------------- queues
    FOR v_queue IN
        SELECT q.id, q.name
          FROM queen.queues q
         WHERE q.tenant_id = p_tenant
         ORDER BY q.id
         LIMIT p_max_queues
    LOOP
        -- The queue row first, as the lock order has it (queues before
        -- queen_streams.state, whose residue is deleted next): a purge that
        -- held state rows while waiting for the queue row would close a cycle
        -- with a streams cycle, which holds that row KEY SHARE and then writes
        -- state. A queue held elsewhere is left to a later call.
        PERFORM 1 FROM queen.queues q WHERE q.id = v_queue.id FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND;

        SELECT COALESCE(array_agg(p.id), '{}') INTO v_parts
          FROM queen.log_partitions p
         WHERE p.queue_id = v_queue.id;

        IF v_budget_traces > 0 THEN
            -- message_trace_names cascades from its trace.
            DELETE FROM queen.message_traces
             WHERE ctid = ANY (ARRAY(SELECT t.ctid FROM queen.message_traces t
                                      WHERE t.partition_id = ANY (v_parts)
                                      LIMIT v_budget_traces
                                      FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_budget_traces := v_budget_traces - v_count;
            v_rows := jsonb_set(v_rows, '{queen.message_traces}',
                                to_jsonb((v_rows ->> 'queen.message_traces')::bigint + v_count));
        END IF;

        IF v_budget_retention > 0 THEN
            DELETE FROM queen.retention_history
             WHERE ctid = ANY (ARRAY(SELECT r.ctid FROM queen.retention_history r
                                      WHERE r.partition_id = ANY (v_parts)
                                      LIMIT v_budget_retention
                                      FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_budget_retention := v_budget_retention - v_count;
            v_rows := jsonb_set(v_rows, '{queen.retention_history}',
                                to_jsonb((v_rows ->> 'queen.retention_history')::bigint + v_count));
        END IF;

        IF v_streams AND v_budget_state > 0 THEN
            -- Dynamic only because queen_streams may be absent; both values are bound.
            EXECUTE 'DELETE FROM queen_streams.state
                      WHERE ctid = ANY (ARRAY(SELECT s.ctid FROM queen_streams.state s
                                               WHERE s.partition_id = ANY ($1)
                                               LIMIT $2
                                               FOR UPDATE SKIP LOCKED))'
              USING v_parts, v_budget_state;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_budget_state := v_budget_state - v_count;
            v_rows := jsonb_set(v_rows, '{queen_streams.state}',
                                to_jsonb((v_rows ->> 'queen_streams.state')::bigint + v_count));
        END IF;

        v_left := EXISTS (SELECT 1 FROM queen.message_traces WHERE partition_id = ANY (v_parts))
               OR EXISTS (SELECT 1 FROM queen.retention_history WHERE partition_id = ANY (v_parts));
        IF NOT v_left AND v_streams THEN
            EXECUTE 'SELECT EXISTS (SELECT 1 FROM queen_streams.state WHERE partition_id = ANY ($1))'
               INTO v_left USING v_parts;
        END IF;
        IF v_left THEN
            -- Budget spent or rows held elsewhere: keep the queue (and so the
            -- partition ids naming the rest) for the next call.
            RETURN jsonb_build_object(
                'tenant', p_tenant, 'done', false, 'phase', 'queue-residue',
                'queues', jsonb_build_object(
                    'deleted', v_deleted,
                    'remaining', (SELECT count(*) FROM queen.queues WHERE tenant_id = p_tenant)),
                'rows', v_rows);
        END IF;

        -- By name and tenant, its signature; the tenant keeps a same-named
        -- queue of another tenant out of reach.
        PERFORM queen.delete_queue_v1(v_queue.name, p_tenant);
        v_deleted := v_deleted + 1;
    END LOOP;

    SELECT count(*) INTO v_remaining FROM queen.queues WHERE tenant_id = p_tenant;
    IF v_remaining > 0 THEN
        RETURN jsonb_build_object(
            'tenant', p_tenant, 'done', false, 'phase', 'queues',
            'queues', jsonb_build_object('deleted', v_deleted, 'remaining', v_remaining),
            'rows', v_rows);
    END IF;

    -- ---------------------------------------------------------------- sweep
    FOREACH v_table IN ARRAY C_TENANT_TABLES LOOP
        CONTINUE WHEN v_table IN ('queen.log_timers', 'queen.queues');
        v_rel := to_regclass(v_table);
        CONTINUE WHEN v_rel IS NULL;
        IF v_table = 'queen_streams.queries' THEN
            -- State rows of the tenant's queries that no partition attributed
            -- (say a partition already reclaimed) go first, bounded, so the
            -- query delete below never cascades into an unbounded delete.
            EXECUTE 'DELETE FROM queen_streams.state
                      WHERE ctid = ANY (ARRAY(SELECT s.ctid FROM queen_streams.state s
                                               JOIN queen_streams.queries q ON q.id = s.query_id
                                              WHERE q.tenant_id = $1
                                              LIMIT $2
                                              FOR UPDATE OF s SKIP LOCKED))'
              USING p_tenant, p_max_rows;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_rows := jsonb_set(v_rows, '{queen_streams.state}',
                                to_jsonb((v_rows ->> 'queen_streams.state')::bigint + v_count));
            EXECUTE 'DELETE FROM queen_streams.queries
                      WHERE ctid = ANY (ARRAY(SELECT q.ctid FROM queen_streams.queries q
                                              WHERE q.tenant_id = $1
                                                AND NOT EXISTS (SELECT 1 FROM queen_streams.state s
                                                                 WHERE s.query_id = q.id)
                                              LIMIT $2
                                              FOR UPDATE SKIP LOCKED))'
              USING p_tenant, p_max_rows;
        ELSE
            -- Only the table name is spliced, from the constant above, quoted
            -- by regclass; the tenant and the budget are bound.
            EXECUTE format('DELETE FROM %s WHERE ctid = ANY (ARRAY('
                           'SELECT ctid FROM %s WHERE tenant_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED))',
                           v_rel, v_rel)
              USING p_tenant, p_max_rows;
        END IF;
        GET DIAGNOSTICS v_count = ROW_COUNT;
        v_rows := v_rows || jsonb_build_object(v_table, v_count);
    END LOOP;

    -- Done only when no listed table holds a row of the tenant.
    v_left := false;
    FOREACH v_table IN ARRAY C_TENANT_TABLES LOOP
        v_rel := to_regclass(v_table);
        CONTINUE WHEN v_rel IS NULL;
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE tenant_id = $1)', v_rel)
           INTO v_left USING p_tenant;
        EXIT WHEN v_left;
    END LOOP;

    RETURN jsonb_build_object(
        'tenant', p_tenant,
        'done', NOT v_left,
        'phase', CASE WHEN v_left THEN 'sweep' ELSE 'complete' END,
        'queues', jsonb_build_object('deleted', v_deleted, 'remaining', 0),
        'rows', v_rows);
END;
$$;

GRANT EXECUTE ON FUNCTION queen.delete_tenant_data_v1(uuid, integer, integer, boolean) TO PUBLIC;
