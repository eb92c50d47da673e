-- =============================================================================
-- 008_streams_register_query_v1 : POST /streams/v1/queries (broker/DESIGN.md,
-- Streams). A streaming query is registered once per start of its runner, by
-- (tenant, name); the answer is the query's id, which every later call names.
--
-- queen.streams_register_query_v1(tenant, name, source, sink, config_hash,
-- reset) returns one row (outcome, query_id, detail):
--   'fresh'     the query did not exist and was created;
--   'existing'  it existed with this config_hash (a redeploy); its source and
--               sink are updated;
--   'reset'     it existed with another config_hash and reset was asked: its
--               state is deleted and the new hash stored;
--   'mismatch'  it existed with another config_hash and no reset: nothing is
--               written (HTTP 409); query_id is the existing query's;
--   'denied'    a new name of a tenant without a streams grant, or whose grant
--               is full: nothing is written (HTTP 403); detail says which.
--
-- The grant (the reference settled what it is): a row of queen_streams.quota
-- for the tenant, enabled, with max_queries NULL (unlimited) or above the
-- tenant's count of queries. Only new names are checked, and never for the
-- default tenant, which needs no row: a broker without tenancy serves only
-- the default tenant and so never gates. Re-registering an existing query is
-- never gated, so a revoked grant stops new queries, not running ones. The
-- grant row is taken FOR UPDATE, which serialises one tenant's new
-- registrations so the count cannot overshoot max_queries.
--
-- Lock order (broker/DESIGN.md, Lock order): queen_streams.quota, then
-- queen_streams.queries, then (reset only) queen_streams.state. A reset takes
-- the query row FOR UPDATE, which waits for the cycles in flight (they hold
-- it KEY SHARE, 007) and holds off new ones until the state is gone. Two
-- concurrent registers of one new name: the second one's insert finds the
-- first's row and is answered as a register of an existing query.
-- =============================================================================

CREATE OR REPLACE FUNCTION queen.streams_register_query_v1(
    p_tenant uuid,
    p_name text,
    p_source_queue text,
    p_sink_queue text,
    p_config_hash text,
    p_reset boolean)
RETURNS TABLE (outcome text, query_id uuid, detail text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    C_DEFAULT_TENANT CONSTANT uuid := '00000000-0000-0000-0000-000000000001';
    v_quota record;
    v_count bigint;
    v_id uuid;
    v_hash text;
BEGIN
    detail := NULL;
    SELECT sq.id, sq.config_hash INTO v_id, v_hash
      FROM queen_streams.queries sq
     WHERE sq.tenant_id = p_tenant AND sq.name = p_name;

    IF v_id IS NULL THEN
        IF p_tenant <> C_DEFAULT_TENANT THEN
            SELECT g.enabled, g.max_queries INTO v_quota
              FROM queen_streams.quota g
             WHERE g.tenant_id = p_tenant
               FOR UPDATE;
            IF NOT FOUND OR NOT v_quota.enabled THEN
                outcome := 'denied';
                detail := 'streams not granted for this tenant';
                RETURN NEXT;
                RETURN;
            END IF;
            IF v_quota.max_queries IS NOT NULL THEN
                SELECT count(*) INTO v_count FROM queen_streams.queries sq WHERE sq.tenant_id = p_tenant;
                IF v_count >= v_quota.max_queries THEN
                    outcome := 'denied';
                    detail := 'streams query quota exceeded (max ' || v_quota.max_queries || ')';
                    RETURN NEXT;
                    RETURN;
                END IF;
            END IF;
        END IF;
        INSERT INTO queen_streams.queries (tenant_id, name, source_queue, sink_queue, config_hash)
        VALUES (p_tenant, p_name, p_source_queue, NULLIF(p_sink_queue, ''), p_config_hash)
        ON CONFLICT (tenant_id, name) DO NOTHING
        RETURNING id INTO v_id;
        IF v_id IS NOT NULL THEN
            outcome := 'fresh';
            query_id := v_id;
            RETURN NEXT;
            RETURN;
        END IF;
        -- A concurrent register created it first: answer as for an existing query.
        SELECT sq.id, sq.config_hash INTO v_id, v_hash
          FROM queen_streams.queries sq
         WHERE sq.tenant_id = p_tenant AND sq.name = p_name;
    END IF;

    query_id := v_id;
    IF v_hash = p_config_hash THEN
        UPDATE queen_streams.queries sq
           SET source_queue = p_source_queue, sink_queue = NULLIF(p_sink_queue, ''), updated_at = now()
         WHERE sq.id = v_id
           AND (sq.source_queue IS DISTINCT FROM p_source_queue
                OR sq.sink_queue IS DISTINCT FROM NULLIF(p_sink_queue, ''));
        outcome := 'existing';
    ELSIF COALESCE(p_reset, false) THEN
        PERFORM 1 FROM queen_streams.queries sq WHERE sq.id = v_id FOR UPDATE;
        DELETE FROM queen_streams.state s WHERE s.query_id = v_id;
        UPDATE queen_streams.queries sq
           SET source_queue = p_source_queue, sink_queue = NULLIF(p_sink_queue, ''),
               config_hash = p_config_hash, updated_at = now()
         WHERE sq.id = v_id;
        outcome := 'reset';
    ELSE
        outcome := 'mismatch';
        detail := 'config_hash mismatch: operator chain changed for queryId ''' || p_name
                  || '''. Pass reset:true to wipe existing state, or use a new queryId.';
    END IF;
    RETURN NEXT;
END;
$$;
