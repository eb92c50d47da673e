-- =============================================================================
-- 017_traces : application trace events attached to a message: the write and
-- the three readers.
--
-- queen.message_traces has no tenant column and no foreign key (a trace
-- outlives the segment it describes), so ownership resolves through the
-- trace's partition: log_partitions -> queues.tenant_id. A trace whose
-- partition is gone belongs to nobody and is never listed. message_id stays
-- NULL: a message id lives inside a segment blob, opaque to SQL, and traces
-- are keyed by (partition_id, transaction_id).
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.trace_record_v1: records one trace event and its names (duplicates
-- collapse). Returns the trace id, or NULL, writing nothing, when the
-- partition is not the tenant's.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.trace_record_v1(
    p_tenant uuid, p_partition_id uuid, p_transaction_id text, p_group text, p_event_type text,
    p_data jsonb, p_worker_id text, p_names text[])
RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                    WHERE p.id = p_partition_id AND q.tenant_id = p_tenant) THEN
        RETURN NULL;
    END IF;
    INSERT INTO queen.message_traces
        (message_id, partition_id, transaction_id, consumer_group, event_type, data, worker_id)
    VALUES (NULL, p_partition_id, p_transaction_id, p_group, p_event_type, p_data, p_worker_id)
    RETURNING id INTO v_id;
    INSERT INTO queen.message_trace_names (trace_id, trace_name)
    SELECT DISTINCT v_id, n FROM unnest(COALESCE(p_names, ARRAY[]::text[])) AS n
    ON CONFLICT (trace_id, trace_name) DO NOTHING;
    RETURN v_id;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.traces_of_message_v1: the traces of one message of a tenant partition,
-- oldest first, each with its names in name order. data is jsonb as text so
-- the broker passes it through unchanged.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.traces_of_message_v1(p_tenant uuid, p_partition_id uuid, p_transaction_id text)
RETURNS TABLE (id uuid, event_type text, data text, consumer_group text, worker_id text,
               created_at timestamptz, trace_names text[])
LANGUAGE sql STABLE AS $$
    SELECT mt.id, mt.event_type::text, mt.data::text, mt.consumer_group::text, mt.worker_id::text,
           mt.created_at,
           ARRAY(SELECT n.trace_name FROM queen.message_trace_names n
                  WHERE n.trace_id = mt.id ORDER BY n.trace_name)
      FROM queen.message_traces mt
     WHERE mt.partition_id = p_partition_id AND mt.transaction_id = p_transaction_id
       AND EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                    WHERE p.id = p_partition_id AND q.tenant_id = p_tenant)
     ORDER BY mt.created_at, mt.id
$$;

-- -----------------------------------------------------------------------------
-- queen.traces_by_name_v1: one page of the tenant's traces carrying a name,
-- oldest first, with the queue and partition they belong to.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.traces_by_name_v1(p_tenant uuid, p_name text, p_limit integer, p_offset integer)
RETURNS TABLE (id uuid, transaction_id text, partition_id uuid, event_type text, data text, consumer_group text,
               worker_id text, created_at timestamptz, queue_name text, partition_name text, trace_names text[])
LANGUAGE sql STABLE AS $$
    SELECT mt.id, mt.transaction_id::text, mt.partition_id, mt.event_type::text, mt.data::text,
           mt.consumer_group::text, mt.worker_id::text, mt.created_at, q.name::text, p.name,
           ARRAY(SELECT n2.trace_name FROM queen.message_trace_names n2
                  WHERE n2.trace_id = mt.id ORDER BY n2.trace_name)
      FROM queen.message_trace_names n
      JOIN queen.message_traces mt ON mt.id = n.trace_id
      JOIN queen.log_partitions p ON p.id = mt.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE n.trace_name = p_name AND q.tenant_id = p_tenant
     ORDER BY mt.created_at, mt.id
     LIMIT p_limit OFFSET p_offset
$$;

-- queen.traces_by_name_count_v1: how many of the tenant's traces carry a name.
CREATE OR REPLACE FUNCTION queen.traces_by_name_count_v1(p_tenant uuid, p_name text)
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*)
      FROM queen.message_trace_names n
      JOIN queen.message_traces mt ON mt.id = n.trace_id
      JOIN queen.log_partitions p ON p.id = mt.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE n.trace_name = p_name AND q.tenant_id = p_tenant
$$;

-- -----------------------------------------------------------------------------
-- queen.trace_names_v1: one page of the names on the tenant's traces, most
-- recently seen first, counted over that tenant's traces only (names are
-- caller-chosen text: another tenant's must not show).
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.trace_names_v1(p_tenant uuid, p_limit integer, p_offset integer)
RETURNS TABLE (trace_name text, trace_count bigint, message_count bigint, last_seen timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT n.trace_name, count(DISTINCT n.trace_id),
           count(DISTINCT (mt.partition_id, mt.transaction_id)), max(mt.created_at)
      FROM queen.message_trace_names n
      JOIN queen.message_traces mt ON mt.id = n.trace_id
      JOIN queen.log_partitions p ON p.id = mt.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
     GROUP BY n.trace_name
     ORDER BY max(mt.created_at) DESC, n.trace_name
     LIMIT p_limit OFFSET p_offset
$$;

-- queen.trace_names_count_v1: how many distinct names the tenant's traces carry.
CREATE OR REPLACE FUNCTION queen.trace_names_count_v1(p_tenant uuid)
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(DISTINCT n.trace_name)
      FROM queen.message_trace_names n
      JOIN queen.message_traces mt ON mt.id = n.trace_id
      JOIN queen.log_partitions p ON p.id = mt.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE q.tenant_id = p_tenant
$$;
