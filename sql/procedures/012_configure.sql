-- =============================================================================
-- 012_configure : POST /api/v1/configure, with the reference broker's options,
-- defaults and bounds.
--
-- queen.configure_queue_v1 is the only writer of a queue's configuration. It
-- upserts the queen.queues row of (tenant, name) and echoes the effective
-- configuration. The options bag is what the broker built from the request;
-- its `replace` key is a directive (never stored, never echoed):
--   * replace = true, or the queue does not exist yet: every option is parsed
--     from its default, so an absent key lands on the default;
--   * otherwise (merge): an absent key keeps the stored value, an explicit
--     null restores the default, a value sets it.
-- An option of the wrong type or out of range writes nothing and answers
-- {"error": "<sentence>", "invalid": "<option>"}, which the broker serves as a
-- 400. Locks: the one queues row, FOR UPDATE (queue lock space,
-- broker/DESIGN.md, Lock order).
-- =============================================================================

-- -----------------------------------------------------------------------------
-- Option readers. Each returns NULL when the key is absent or JSON null, the
-- typed value otherwise, and raises invalid_parameter_value naming the option
-- (in COLUMN) when the value cannot be that type. Integers accept a JSON
-- integer or a string holding one (what the reference's text cast accepted);
-- booleans accept a JSON boolean or a string PostgreSQL reads as one.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.configure_int_option_v1(p_options jsonb, p_key text, p_min integer)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_raw jsonb := p_options -> p_key;
    v_int integer;
BEGIN
    IF v_raw IS NULL OR jsonb_typeof(v_raw) = 'null' THEN
        RETURN NULL;
    END IF;
    BEGIN
        IF jsonb_typeof(v_raw) NOT IN ('number', 'string') THEN
            RAISE invalid_text_representation;
        END IF;
        v_int := (v_raw #>> '{}')::integer;
    EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range THEN
        RAISE EXCEPTION '% must be an integer, got %', p_key, v_raw::text
            USING ERRCODE = 'invalid_parameter_value', COLUMN = p_key;
    END;
    IF p_min IS NOT NULL AND v_int < p_min THEN
        RAISE EXCEPTION '% must be at least %, got %', p_key, p_min, v_int
            USING ERRCODE = 'invalid_parameter_value', COLUMN = p_key;
    END IF;
    RETURN v_int;
END;
$$;

CREATE OR REPLACE FUNCTION queen.configure_bool_option_v1(p_options jsonb, p_key text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_raw jsonb := p_options -> p_key;
BEGIN
    IF v_raw IS NULL OR jsonb_typeof(v_raw) = 'null' THEN
        RETURN NULL;
    END IF;
    BEGIN
        IF jsonb_typeof(v_raw) NOT IN ('boolean', 'string') THEN
            RAISE invalid_text_representation;
        END IF;
        RETURN (v_raw #>> '{}')::boolean;
    EXCEPTION WHEN invalid_text_representation THEN
        RAISE EXCEPTION '% must be a boolean, got %', p_key, v_raw::text
            USING ERRCODE = 'invalid_parameter_value', COLUMN = p_key;
    END;
END;
$$;

-- Strings are bounded by their column (p_max characters); a longer one would
-- otherwise fail the upsert as a 500.
CREATE OR REPLACE FUNCTION queen.configure_text_option_v1(p_options jsonb, p_key text, p_max integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_raw jsonb := p_options -> p_key;
BEGIN
    IF v_raw IS NULL OR jsonb_typeof(v_raw) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(v_raw) <> 'string' THEN
        RAISE EXCEPTION '% must be a string, got %', p_key, v_raw::text
            USING ERRCODE = 'invalid_parameter_value', COLUMN = p_key;
    END IF;
    IF p_max IS NOT NULL AND length(v_raw #>> '{}') > p_max THEN
        RAISE EXCEPTION '% must be at most % characters', p_key, p_max
            USING ERRCODE = 'invalid_parameter_value', COLUMN = p_key;
    END IF;
    RETURN v_raw #>> '{}';
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.configure_queue_v1(name, options, tenant) -> jsonb
-- Defaults (the reference broker's): leaseTime 300, retryLimit 3, retryDelay
-- 1000, maxSize 0, ttl 3600, deadLetterQueue true, dlqAfterMaxRetries true,
-- delayedProcessing 0, windowBuffer 0, retention* off/0, encryption off,
-- maxWaitTimeSeconds 0, minPopWaitTime 0 (clamped to 0..60000),
-- dedupWindowSeconds 3600 (floored at 0), retentionSinkHold '' and
-- retentionSinkHoldMaxSeconds 604800 (both rejected out of range: they govern
-- deletion, so a silent clamp would lose data). Durations and counts below 0
-- are rejected (our choice: the reference stored them; none has a meaning).
-- A value kept by a merge is not re-validated: the call that wrote it did.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.configure_queue_v1(
    p_queue_name text,
    p_options jsonb DEFAULT '{}'::jsonb,
    p_tenant uuid DEFAULT '00000000-0000-0000-0000-000000000001')
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_cur queen.queues%ROWTYPE;
    v_keep boolean;
    v_queue_id uuid;
    v_namespace text;
    v_task text;
    v_priority integer;
    v_lease_time integer;
    v_retry_limit integer;
    v_retry_delay integer;
    v_max_size integer;
    v_ttl integer;
    v_dead_letter_queue boolean;
    v_dlq_after_max_retries boolean;
    v_delayed_processing integer;
    v_window_buffer integer;
    v_retention_seconds integer;
    v_completed_retention_seconds integer;
    v_retention_enabled boolean;
    v_encryption_enabled boolean;
    v_max_wait_time_seconds integer;
    v_min_pop_wait_time integer;
    v_dedup_window_seconds integer;
    v_sink_hold text;
    v_sink_hold_max_seconds integer;
    v_message text;
    v_option text;
BEGIN
    -- A NULL bag says nothing, like an empty one; it must not read as "reset".
    p_options := COALESCE(p_options, '{}'::jsonb);
    IF jsonb_typeof(p_options) <> 'object' THEN
        RETURN jsonb_build_object('error', 'options must be an object', 'invalid', 'options');
    END IF;
    IF p_queue_name IS NULL OR length(p_queue_name) > 255 THEN
        RETURN jsonb_build_object('error', 'queue must be a name of at most 255 characters', 'invalid', 'queue');
    END IF;

    -- FOR UPDATE serialises concurrent edits of one queue: the second merges
    -- onto the first one's result. A create has no row to lock and relies on
    -- the ON CONFLICT below.
    SELECT * INTO v_cur FROM queen.queues q
     WHERE q.tenant_id = p_tenant AND q.name = p_queue_name
       FOR UPDATE;
    v_keep := FOUND AND NOT COALESCE(jsonb_typeof(p_options -> 'replace') = 'boolean'
                                     AND (p_options ->> 'replace')::boolean, false);

    BEGIN
        v_namespace := CASE WHEN v_keep AND NOT p_options ? 'namespace' THEN COALESCE(v_cur.namespace, '')
                            ELSE COALESCE(queen.configure_text_option_v1(p_options, 'namespace', 255), '') END;
        v_task := CASE WHEN v_keep AND NOT p_options ? 'task' THEN COALESCE(v_cur.task, '')
                       ELSE COALESCE(queen.configure_text_option_v1(p_options, 'task', 255), '') END;
        v_priority := CASE WHEN v_keep AND NOT p_options ? 'priority' THEN v_cur.priority
                           ELSE COALESCE(queen.configure_int_option_v1(p_options, 'priority', NULL), 0) END;
        v_lease_time := CASE WHEN v_keep AND NOT p_options ? 'leaseTime' THEN v_cur.lease_time
                             ELSE COALESCE(queen.configure_int_option_v1(p_options, 'leaseTime', 0), 300) END;
        v_retry_limit := CASE WHEN v_keep AND NOT p_options ? 'retryLimit' THEN v_cur.retry_limit
                              ELSE COALESCE(queen.configure_int_option_v1(p_options, 'retryLimit', 0), 3) END;
        v_retry_delay := CASE WHEN v_keep AND NOT p_options ? 'retryDelay' THEN v_cur.retry_delay
                              ELSE COALESCE(queen.configure_int_option_v1(p_options, 'retryDelay', 0), 1000) END;
        v_max_size := CASE WHEN v_keep AND NOT p_options ? 'maxSize' THEN v_cur.max_queue_size
                           ELSE COALESCE(queen.configure_int_option_v1(p_options, 'maxSize', 0), 0) END;
        v_ttl := CASE WHEN v_keep AND NOT p_options ? 'ttl' THEN v_cur.ttl
                      ELSE COALESCE(queen.configure_int_option_v1(p_options, 'ttl', 0), 3600) END;
        v_dead_letter_queue := CASE WHEN v_keep AND NOT p_options ? 'deadLetterQueue' THEN v_cur.dead_letter_queue
                                    ELSE COALESCE(queen.configure_bool_option_v1(p_options, 'deadLetterQueue'), true) END;
        v_dlq_after_max_retries := CASE WHEN v_keep AND NOT p_options ? 'dlqAfterMaxRetries' THEN v_cur.dlq_after_max_retries
                                        ELSE COALESCE(queen.configure_bool_option_v1(p_options, 'dlqAfterMaxRetries'), true) END;
        v_delayed_processing := CASE WHEN v_keep AND NOT p_options ? 'delayedProcessing' THEN v_cur.delayed_processing
                                     ELSE COALESCE(queen.configure_int_option_v1(p_options, 'delayedProcessing', 0), 0) END;
        v_window_buffer := CASE WHEN v_keep AND NOT p_options ? 'windowBuffer' THEN v_cur.window_buffer
                                ELSE COALESCE(queen.configure_int_option_v1(p_options, 'windowBuffer', 0), 0) END;
        v_retention_seconds := CASE WHEN v_keep AND NOT p_options ? 'retentionSeconds' THEN v_cur.retention_seconds
                                    ELSE COALESCE(queen.configure_int_option_v1(p_options, 'retentionSeconds', 0), 0) END;
        v_completed_retention_seconds :=
            CASE WHEN v_keep AND NOT p_options ? 'completedRetentionSeconds' THEN v_cur.completed_retention_seconds
                 ELSE COALESCE(queen.configure_int_option_v1(p_options, 'completedRetentionSeconds', 0), 0) END;
        v_retention_enabled := CASE WHEN v_keep AND NOT p_options ? 'retentionEnabled' THEN v_cur.retention_enabled
                                    ELSE COALESCE(queen.configure_bool_option_v1(p_options, 'retentionEnabled'), false) END;
        v_encryption_enabled := CASE WHEN v_keep AND NOT p_options ? 'encryptionEnabled' THEN v_cur.encryption_enabled
                                     ELSE COALESCE(queen.configure_bool_option_v1(p_options, 'encryptionEnabled'), false) END;
        v_max_wait_time_seconds := CASE WHEN v_keep AND NOT p_options ? 'maxWaitTimeSeconds' THEN v_cur.max_wait_time_seconds
                                        ELSE COALESCE(queen.configure_int_option_v1(p_options, 'maxWaitTimeSeconds', 0), 0) END;
        -- Clamped, not rejected: the caller's own long-poll deadline bounds it anyway.
        v_min_pop_wait_time := CASE WHEN v_keep AND NOT p_options ? 'minPopWaitTime' THEN v_cur.min_pop_wait_time
                                    ELSE LEAST(GREATEST(COALESCE(
                                             queen.configure_int_option_v1(p_options, 'minPopWaitTime', NULL), 0), 0), 60000) END;
        -- Floored, not rejected: 0 simply turns the dedup probe off.
        v_dedup_window_seconds := CASE WHEN v_keep AND NOT p_options ? 'dedupWindowSeconds' THEN v_cur.dedup_window_seconds
                                       ELSE GREATEST(COALESCE(
                                            queen.configure_int_option_v1(p_options, 'dedupWindowSeconds', NULL), 3600), 0) END;
        v_sink_hold := CASE WHEN v_keep AND NOT p_options ? 'retentionSinkHold' THEN v_cur.retention_sink_hold
                            ELSE COALESCE(queen.configure_text_option_v1(p_options, 'retentionSinkHold', NULL), '') END;
        v_sink_hold_max_seconds :=
            CASE WHEN v_keep AND NOT p_options ? 'retentionSinkHoldMaxSeconds' THEN v_cur.retention_sink_hold_max_seconds
                 ELSE COALESCE(queen.configure_int_option_v1(p_options, 'retentionSinkHoldMaxSeconds', NULL), 604800) END;

        -- The sink name becomes part of a KV key built by concatenation, hence the character set.
        IF v_sink_hold !~ '^[A-Za-z0-9._-]{0,64}$' THEN
            RAISE EXCEPTION 'retentionSinkHold must match [A-Za-z0-9._-]{0,64}, got %', quote_literal(v_sink_hold)
                USING ERRCODE = 'invalid_parameter_value', COLUMN = 'retentionSinkHold';
        END IF;
        IF v_sink_hold_max_seconds < 60 OR v_sink_hold_max_seconds > 31536000 THEN
            RAISE EXCEPTION 'retentionSinkHoldMaxSeconds must be between 60 and 31536000, got %', v_sink_hold_max_seconds
                USING ERRCODE = 'invalid_parameter_value', COLUMN = 'retentionSinkHoldMaxSeconds';
        END IF;
    EXCEPTION WHEN invalid_parameter_value THEN
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_option = COLUMN_NAME;
        RETURN jsonb_build_object('error', v_message, 'invalid', v_option);
    END;

    INSERT INTO queen.queues AS q (
        tenant_id, name, namespace, task, priority, lease_time, retry_limit, retry_delay,
        max_queue_size, ttl, dead_letter_queue, dlq_after_max_retries, delayed_processing,
        window_buffer, retention_seconds, completed_retention_seconds, retention_enabled,
        encryption_enabled, max_wait_time_seconds, min_pop_wait_time, dedup_window_seconds,
        retention_sink_hold, retention_sink_hold_max_seconds)
    VALUES (
        p_tenant, p_queue_name, v_namespace, v_task, v_priority, v_lease_time, v_retry_limit, v_retry_delay,
        v_max_size, v_ttl, v_dead_letter_queue, v_dlq_after_max_retries, v_delayed_processing,
        v_window_buffer, v_retention_seconds, v_completed_retention_seconds, v_retention_enabled,
        v_encryption_enabled, v_max_wait_time_seconds, v_min_pop_wait_time, v_dedup_window_seconds,
        v_sink_hold, v_sink_hold_max_seconds)
    ON CONFLICT (tenant_id, name) DO UPDATE SET
        namespace = EXCLUDED.namespace,
        task = EXCLUDED.task,
        priority = EXCLUDED.priority,
        lease_time = EXCLUDED.lease_time,
        retry_limit = EXCLUDED.retry_limit,
        retry_delay = EXCLUDED.retry_delay,
        max_queue_size = EXCLUDED.max_queue_size,
        ttl = EXCLUDED.ttl,
        dead_letter_queue = EXCLUDED.dead_letter_queue,
        dlq_after_max_retries = EXCLUDED.dlq_after_max_retries,
        delayed_processing = EXCLUDED.delayed_processing,
        window_buffer = EXCLUDED.window_buffer,
        retention_seconds = EXCLUDED.retention_seconds,
        completed_retention_seconds = EXCLUDED.completed_retention_seconds,
        retention_enabled = EXCLUDED.retention_enabled,
        encryption_enabled = EXCLUDED.encryption_enabled,
        max_wait_time_seconds = EXCLUDED.max_wait_time_seconds,
        min_pop_wait_time = EXCLUDED.min_pop_wait_time,
        dedup_window_seconds = EXCLUDED.dedup_window_seconds,
        retention_sink_hold = EXCLUDED.retention_sink_hold,
        retention_sink_hold_max_seconds = EXCLUDED.retention_sink_hold_max_seconds,
        updated_at = now()
    RETURNING q.id INTO v_queue_id;

    -- The echo is the effective row, key by key; partitionId stays null (the
    -- first push creates partitions) and storage is a wire literal.
    RETURN jsonb_build_object(
        'configured', true,
        'queueId', v_queue_id,
        'partitionId', NULL::uuid,
        'queue', p_queue_name,
        'namespace', v_namespace,
        'task', v_task,
        'storage', 'segments',
        'options', jsonb_build_object(
            'priority', v_priority,
            'leaseTime', v_lease_time,
            'retryLimit', v_retry_limit,
            'retryDelay', v_retry_delay,
            'maxSize', v_max_size,
            'ttl', v_ttl,
            'deadLetterQueue', v_dead_letter_queue,
            'dlqAfterMaxRetries', v_dlq_after_max_retries,
            'delayedProcessing', v_delayed_processing,
            'windowBuffer', v_window_buffer,
            'retentionSeconds', v_retention_seconds,
            'completedRetentionSeconds', v_completed_retention_seconds,
            'retentionEnabled', v_retention_enabled,
            'encryptionEnabled', v_encryption_enabled,
            'maxWaitTimeSeconds', v_max_wait_time_seconds,
            'minPopWaitTime', v_min_pop_wait_time,
            'dedupWindowSeconds', v_dedup_window_seconds,
            'retentionSinkHold', v_sink_hold,
            'retentionSinkHoldMaxSeconds', v_sink_hold_max_seconds));
END;
$$;
