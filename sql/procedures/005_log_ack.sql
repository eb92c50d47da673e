-- =============================================================================
-- 005_log_ack : owns queen.log_dlq. The ack, lease-renewal, DLQ hand-off and
-- transaction-wire procedures are filled by the message-path capability.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.log_dlq
-- Dead-lettered frames as snapshots (payload decoded by the broker, since
-- blobs are opaque to SQL). (partition_id, "offset") records where the poison
-- frame lived. No FK anywhere: retention never purges this table, queue
-- deletion clears it explicitly, and a partition holding DLQ rows is never
-- reclaimed by cleanup. retry_count snapshots batch_retry_count at filing.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_dlq (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id   uuid        NOT NULL,
    consumer_group text        NOT NULL,
    "offset"       bigint      NOT NULL,
    message_id     uuid,
    transaction_id text,
    payload        jsonb,
    error          text,
    retry_count    integer     DEFAULT 0,
    failed_at      timestamptz NOT NULL DEFAULT now()
);

-- DLQ listings read newest-first per partition.
CREATE INDEX IF NOT EXISTS idx_log_dlq_partition_failed_at
    ON queen.log_dlq (partition_id, failed_at DESC);

-- -----------------------------------------------------------------------------
-- Ack resolution (broker/DESIGN.md, Acks, retries and dead letters). The broker
-- resolves an ack group in one transaction: log_ack_resolve_v1 locks the
-- (partition, group) row and maps each acked transactionId hash to the lowest
-- matching offset at or above the cursor; the broker decides the outcome
-- (implicit ack, retry budget, DLQ) and writes it with log_ack_apply_v1 or, for
-- a dead letter, log_dlq_head_v1 in the same transaction. Acks take
-- consumer-row locks only, never a partition lock (broker/DESIGN.md, Lock
-- order).
-- -----------------------------------------------------------------------------
-- The sidecar hashes of offsets [p_lo, p_lo + p_n) of a partition, concatenated
-- in offset order; p_from is the base of the sidecar row covering p_lo (the scan
-- range is closed on both sides so a generic plan still reads the primary key).
-- Shorter than p_n hashes when some offset has no sidecar row.
-- plpgsql, not sql: a sql function with a FROM clause is not inlined, and its
-- plan lasts one statement, so each ack (its own transaction) planned it again.
CREATE OR REPLACE FUNCTION queen.log_txns_span_v1(p_partition_id uuid, p_from bigint, p_lo bigint, p_n integer)
RETURNS bytea
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_span bytea;
BEGIN
    SELECT string_agg(substring(t.hashes
                                FROM (GREATEST(p_lo, t.base_offset) - t.base_offset)::integer * 16 + 1
                                FOR (LEAST(p_lo + p_n - 1, t.end_offset) - GREATEST(p_lo, t.base_offset) + 1)::integer * 16),
                      ''::bytea ORDER BY t.base_offset)
      INTO v_span
      FROM queen.log_txns t
     WHERE t.partition_id = p_partition_id
       AND t.base_offset >= p_from
       AND t.base_offset <= p_lo + p_n - 1
       AND t.end_offset >= p_lo;
    RETURN v_span;
END;
$$;

DROP FUNCTION IF EXISTS queen.log_ack_resolve_v1(uuid, text, bytea, uuid);
DROP FUNCTION IF EXISTS queen.log_ack_resolve_v1(uuid, text, bytea, uuid, boolean);
-- p_bounded: a leased ack, which can only resolve up to the leased batch end.
CREATE FUNCTION queen.log_ack_resolve_v1(
    p_partition_id uuid, p_group text, p_hashes bytea, p_tenant uuid, p_bounded boolean)
RETURNS TABLE (
    consumer_found boolean,
    tenant_ok boolean,
    committed bigint,
    batch_end bigint,
    worker_id text,
    lease_live boolean,
    batch_retry_count integer,
    last_offset bigint,
    retry_limit integer,
    dlq_enabled boolean,
    span_offsets bigint[],
    below_cursor boolean[],
    -- Where the partition lives, so a lease release can wake pops on every broker.
    queue_name text,
    partition_name text,
    -- The lease was taken by a conflating pop: its one message stands for the whole span.
    lease_conflated boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    c record;
    v_lo bigint;
    v_from bigint;
    v_to bigint;
    v_n integer := length(p_hashes) / 16;
BEGIN
    SELECT lc.committed, lc.batch_end, lc.worker_id, lc.lease_expires_at, lc.batch_retry_count,
           lc.lease_conflated, lp.last_offset, lp.txns_start, q.tenant_id, COALESCE(q.retry_limit, 3) AS retry_limit,
           q.name AS queue_name, lp.name AS partition_name,
           (COALESCE(q.dead_letter_queue, true) OR COALESCE(q.dlq_after_max_retries, true)) AS dlq_enabled
      INTO c
      FROM queen.log_consumers lc
      JOIN queen.log_partitions lp ON lp.id = lc.partition_id
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
       FOR UPDATE OF lc;
    IF NOT FOUND THEN
        consumer_found := false;
        tenant_ok := EXISTS (SELECT 1 FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id
                             WHERE lp.id = p_partition_id AND q.tenant_id = p_tenant);
        RETURN NEXT;
        RETURN;
    END IF;
    consumer_found := true;
    tenant_ok := c.tenant_id = p_tenant;
    committed := c.committed;
    batch_end := c.batch_end;
    worker_id := c.worker_id;
    lease_live := c.worker_id IS NOT NULL AND c.lease_expires_at IS NOT NULL AND c.lease_expires_at >= now();
    batch_retry_count := c.batch_retry_count;
    last_offset := c.last_offset;
    retry_limit := c.retry_limit;
    dlq_enabled := c.dlq_enabled;
    queue_name := c.queue_name;
    partition_name := c.partition_name;
    lease_conflated := c.lease_conflated;
    IF NOT tenant_ok THEN
        RETURN NEXT;
        RETURN;
    END IF;

    v_lo := GREATEST(c.committed + 1, c.txns_start);
    -- Start the scan at the sidecar row covering v_lo (PK range scan).
    SELECT max(t.base_offset) INTO v_from FROM queen.log_txns t
     WHERE t.partition_id = p_partition_id AND t.base_offset <= v_lo;
    v_from := COALESCE(v_from, v_lo);

    -- Every sidecar row in range is unnested once and hash-joined with the acked
    -- hashes. A leased ack can only resolve inside its batch, so the scan stops
    -- at batch_end; a lease-less ack may reach the partition's end. The range is
    -- closed on both sides so that a generic plan, which cannot see the values,
    -- still reads it from the primary key rather than the partition's whole backlog.
    v_to := CASE WHEN p_bounded THEN c.batch_end ELSE c.last_offset END;

    -- Fast path: the ack names the next v_n messages from the cursor, in delivery
    -- order (what clients send after a pop). Their sidecar hashes, sliced and
    -- concatenated, then equal p_hashes byte for byte, and no join is needed: the
    -- join below cost ~1 ms per 100-message ack, the largest share of PostgreSQL's
    -- CPU when consuming. A transactionId repeated inside the span resolves here to
    -- each of its own offsets (the join maps both to the lower one): the client
    -- acked both messages.
    IF v_n > 0 AND v_lo + v_n - 1 <= v_to
       AND queen.log_txns_span_v1(p_partition_id, v_from, v_lo, v_n) = p_hashes THEN
        span_offsets := ARRAY(SELECT generate_series(v_lo, v_lo + v_n - 1));
        below_cursor := array_fill(false, ARRAY[v_n]);
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT array_agg(m.off ORDER BY n.idx) INTO span_offsets
      FROM queen.log_unnest_hashes(p_hashes) n
      LEFT JOIN (
          SELECT o.hash, min(t.base_offset + o.idx) AS off
            FROM queen.log_txns t
            CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) o
           WHERE t.partition_id = p_partition_id
             AND t.base_offset >= v_from
             AND t.base_offset <= v_to
             AND t.base_offset + o.idx >= v_lo
             AND t.base_offset + o.idx <= v_to
           GROUP BY o.hash
      ) m ON m.hash = n.hash;
    below_cursor := array_fill(false, ARRAY[length(p_hashes) / 16]);

    -- Only when some hash did not resolve: was it already committed? Bounded
    -- to the newest 1000 sidecar rows below the cursor; an older duplicate ack
    -- reads as unresolvable, which is also what the sidecar purge makes it.
    IF array_position(span_offsets, NULL) IS NOT NULL THEN
        SELECT array_agg(span_offsets[n.idx + 1] IS NULL AND b.hash IS NOT NULL ORDER BY n.idx) INTO below_cursor
          FROM queen.log_unnest_hashes(p_hashes) n
          LEFT JOIN (
              SELECT DISTINCT o.hash
                FROM (SELECT t.base_offset, t.hashes FROM queen.log_txns t
                       WHERE t.partition_id = p_partition_id AND t.base_offset <= c.committed
                         AND t.end_offset >= c.txns_start
                       ORDER BY t.base_offset DESC LIMIT 1000) t
                CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) o
               WHERE t.base_offset + o.idx <= c.committed
          ) b ON b.hash = n.hash;
    END IF;
    RETURN NEXT;
END;
$$;

-- Writes the broker's decision for one ack group: the new cursor, whether the
-- lease ends, and the retry budget (p_retry: 1 = charge one failed attempt,
-- 0 = untouched, -1 = reset with the attempt counters).
CREATE OR REPLACE FUNCTION queen.log_ack_apply_v1(
    p_partition_id uuid, p_group text, p_committed bigint, p_release boolean, p_retry integer)
RETURNS void
-- plpgsql, not sql: a sql function's UPDATE is planned again on every call (~0.25 ms),
-- plpgsql keeps its plan for the session.
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queen.log_consumers c
       SET total_consumed = c.total_consumed + GREATEST(p_committed - c.committed, 0),
           committed = GREATEST(c.committed, p_committed),
           worker_id = CASE WHEN p_release THEN NULL ELSE c.worker_id END,
           lease_expires_at = CASE WHEN p_release THEN NULL ELSE c.lease_expires_at END,
           batch_end = CASE WHEN p_release THEN NULL ELSE c.batch_end END,
           lease_conflated = CASE WHEN p_release THEN false ELSE c.lease_conflated END,
           batch_retry_count = CASE WHEN p_retry = 1 THEN c.batch_retry_count + 1
                                    WHEN p_retry = -1 THEN 0 ELSE c.batch_retry_count END,
           attempt_offset = CASE WHEN p_retry = -1 THEN NULL ELSE c.attempt_offset END,
           attempt_count = CASE WHEN p_retry = -1 THEN 0 ELSE c.attempt_count END
     WHERE c.partition_id = p_partition_id AND c.consumer_group = p_group;
END;
$$;

-- The common ack in one statement: every message of the group completed, under
-- the caller's live lease, named in delivery order from the cursor (what a
-- consumer sends after each pop). Resolution is the resolver's fast path and the
-- write is log_ack_apply_v1 with the outcome AckDecision gives such an ack (cursor
-- to the last named offset; at the batch end the lease ends and the retry budget
-- resets). Called outside a transaction it is one round trip instead of three
-- (resolve, apply, commit) with the consumer row held between them. Under a
-- conflating lease the one message named is the delivered tail at batch_end, and
-- acking it retires the whole leased span (conflation). Anything else
-- (another lease, out of order, a failure) returns applied = false having written
-- nothing, and the broker takes the general path.
CREATE OR REPLACE FUNCTION queen.log_ack_completed_v1(
    p_partition_id uuid, p_group text, p_hashes bytea, p_tenant uuid, p_lease text)
RETURNS TABLE (
    applied boolean,
    released boolean,
    -- Messages wait behind the new cursor of a released partition: wake pops for it.
    more boolean,
    queue_name text,
    partition_name text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    c record;
    v_n integer := length(p_hashes) / 16;
    v_lo bigint;
    v_from bigint;
    v_committed bigint;
BEGIN
    applied := false;
    released := false;
    more := false;
    SELECT lc.committed, lc.batch_end, lc.worker_id, lc.lease_expires_at, lc.lease_conflated, lp.last_offset,
           lp.txns_start, q.tenant_id, q.name AS queue_name, lp.name AS partition_name
      INTO c
      FROM queen.log_consumers lc
      JOIN queen.log_partitions lp ON lp.id = lc.partition_id
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE lc.partition_id = p_partition_id AND lc.consumer_group = p_group
       FOR UPDATE OF lc;
    IF NOT FOUND OR v_n = 0 OR c.tenant_id <> p_tenant OR c.worker_id IS DISTINCT FROM p_lease
       OR c.lease_expires_at IS NULL OR c.lease_expires_at < now() OR c.batch_end IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    v_lo := CASE WHEN c.lease_conflated THEN c.batch_end ELSE GREATEST(c.committed + 1, c.txns_start) END;
    IF v_lo + v_n - 1 > c.batch_end OR v_lo < c.txns_start THEN
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT max(t.base_offset) INTO v_from FROM queen.log_txns t
     WHERE t.partition_id = p_partition_id AND t.base_offset <= v_lo;
    IF queen.log_txns_span_v1(p_partition_id, COALESCE(v_from, v_lo), v_lo, v_n) IS DISTINCT FROM p_hashes THEN
        RETURN NEXT;
        RETURN;
    END IF;
    v_committed := v_lo + v_n - 1;
    released := v_committed >= c.batch_end;
    PERFORM queen.log_ack_apply_v1(p_partition_id, p_group, v_committed, released,
                                   CASE WHEN released THEN -1 ELSE 0 END);
    applied := true;
    more := released AND v_committed < c.last_offset;
    queue_name := c.queue_name;
    partition_name := c.partition_name;
    RETURN NEXT;
END;
$$;

-- Files the poison message of an ack group as a dead letter and moves the
-- cursor past it: the snapshot (payload as stored, so an encryption envelope
-- stays encrypted), the lease released, retry and attempt state reset. When
-- p_file is false (DLQ disabled on the queue) the message is dropped instead.
CREATE OR REPLACE FUNCTION queen.log_dlq_head_v1(
    p_partition_id uuid, p_group text, p_offset bigint, p_message_id uuid, p_transaction_id text,
    p_payload jsonb, p_error text, p_retry_count integer, p_file boolean)
RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_file THEN
        INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id,
                                   payload, error, retry_count)
        VALUES (p_partition_id, p_group, p_offset, p_message_id, p_transaction_id, p_payload,
                COALESCE(p_error, 'Retries exhausted'), p_retry_count)
        RETURNING id INTO v_id;
    END IF;
    PERFORM queen.log_ack_apply_v1(p_partition_id, p_group, p_offset, true, -1);
    RETURN v_id;
END;
$$;

-- Extends every live lease held by one worker id (a multi-partition pop shares
-- one id) within the tenant; an expired lease is not resurrected. Returns how
-- many were renewed and the earliest new expiry.
CREATE OR REPLACE FUNCTION queen.log_renew_lease_v1(p_worker_id text, p_seconds integer, p_tenant uuid)
RETURNS TABLE (renewed integer, expires_at timestamptz)
LANGUAGE sql AS $$
    WITH live AS (
        -- Rows locked in (partition_id, consumer_group) order (broker/DESIGN.md, Lock order).
        SELECT c.partition_id, c.consumer_group
          FROM queen.log_consumers c
          JOIN queen.log_partitions lp ON lp.id = c.partition_id
          JOIN queen.queues q ON q.id = lp.queue_id
         WHERE q.tenant_id = p_tenant
           AND c.worker_id = p_worker_id
           AND c.lease_expires_at >= now()
         ORDER BY c.partition_id, c.consumer_group
           FOR UPDATE OF c
    ), renewed AS (
        UPDATE queen.log_consumers c
           SET lease_expires_at = GREATEST(c.lease_expires_at, now() + make_interval(secs => GREATEST(p_seconds, 1)))
          FROM live
         WHERE c.partition_id = live.partition_id AND c.consumer_group = live.consumer_group
        RETURNING c.lease_expires_at
    )
    SELECT count(*)::integer, min(lease_expires_at) FROM renewed
$$;
