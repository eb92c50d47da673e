-- =============================================================================
-- 009_streams_state_get_v1 : POST /streams/v1/state/get (broker/DESIGN.md,
-- Streams). The state rows of one (query, partition), as the operators read
-- them at the start of a cycle and the idle flush reads ripe windows.
--
-- queen.streams_state_get_v1(tenant, query, partition, keys, key_prefix,
-- ripe_at_or_before) returns one row (status, rows):
--   status 'ok' with rows, a JSON array of {key, value, updated_at} in key
--   order (COLLATE "C"); 'partition_not_found' when the partition is not the
--   tenant's (or does not exist); 'query_not_found' likewise for the query.
--   The two not-found answers do not tell "missing" from "another tenant's".
-- Filters, all optional and ANDed: keys (exact keys; empty or NULL means
-- every key), key_prefix (keys starting with it, compared literally:
-- starts_with, so % and _ are ordinary characters), ripe_at_or_before (only
-- rows whose value has a numeric windowEnd at or before it, in epoch ms; a
-- row without one is not ripe). The reference matches the prefix with LIKE;
-- the SDK's prefixes are an operator tag and a separator, which match the
-- same rows either way.
-- Reads lock nothing; updated_at is rendered as jsonb renders a timestamptz
-- (the session is UTC), as the reference's rows carry it.
-- =============================================================================

CREATE OR REPLACE FUNCTION queen.streams_state_get_v1(
    p_tenant uuid,
    p_query_id uuid,
    p_partition_id uuid,
    p_keys text[],
    p_key_prefix text,
    p_ripe_at_or_before numeric)
RETURNS TABLE (status text, rows jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id
                    WHERE lp.id = p_partition_id AND q.tenant_id = p_tenant) THEN
        status := 'partition_not_found';
        rows := '[]'::jsonb;
        RETURN NEXT;
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queen_streams.queries sq WHERE sq.id = p_query_id AND sq.tenant_id = p_tenant) THEN
        status := 'query_not_found';
        rows := '[]'::jsonb;
        RETURN NEXT;
        RETURN;
    END IF;
    status := 'ok';
    SELECT COALESCE(jsonb_agg(jsonb_build_object('key', s.key, 'value', s.value, 'updated_at', s.updated_at)
                              ORDER BY s.key COLLATE "C"), '[]'::jsonb)
      INTO rows
      FROM queen_streams.state s
     WHERE s.query_id = p_query_id
       AND s.partition_id = p_partition_id
       AND (p_keys IS NULL OR cardinality(p_keys) = 0 OR s.key = ANY (p_keys))
       AND (p_key_prefix IS NULL OR p_key_prefix = '' OR starts_with(s.key, p_key_prefix))
       AND (p_ripe_at_or_before IS NULL
            OR (jsonb_typeof(s.value->'windowEnd') = 'number'
                AND (s.value->>'windowEnd')::numeric <= p_ripe_at_or_before));
    RETURN NEXT;
END;
$$;
