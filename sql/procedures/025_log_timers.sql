-- =============================================================================
-- 025_log_timers : staging table of scheduled messages (/api/v1/timers and the
-- transaction-wire timer rider). The apply / due / claim / fire / fail / dlq /
-- peek / list procedures are filled by the KV/timers capability.
--
-- Second lock space after queen.kv; rows are taken in (queue, timer_key)
-- order (tenant fixed) or (tenant_id, queue, timer_key) for the sweeper.
-- Quota is read from queen.kv_quota and measured into queen.kv_usage (024).
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.log_timers
-- A message that is not in the log yet. The fire pushes it and deletes the row
-- in one transaction. message_id is minted at schedule time; txn is the fixed
-- transactionId of the future frame. claim_token + claimed_until is the fire
-- lease (a row backing off after a failure has claimed_until set and
-- claim_token NULL, and stays cancellable). attempts counts permanent failures
-- only. visible_at is the sweeper's single scan key.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.log_timers (
    tenant_id     uuid             NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    queue         text COLLATE "C" NOT NULL,
    timer_key     text COLLATE "C" NOT NULL,
    "partition"   text             NOT NULL DEFAULT 'Default',
    deliver_at    timestamptz      NOT NULL,
    txn           text             NOT NULL,
    message_id    uuid             NOT NULL,
    payload       bytea            NOT NULL,
    payload_zstd  boolean          NOT NULL DEFAULT false,
    encrypted     boolean          NOT NULL DEFAULT false,
    producer_sub  text,
    attempts      integer          NOT NULL DEFAULT 0,
    last_error    text,
    claimed_until timestamptz,
    claim_token   uuid,
    shard         smallint         NOT NULL
                  GENERATED ALWAYS AS ((hashtextextended(timer_key, 0) & 63)::smallint) STORED,
    visible_at    timestamptz      NOT NULL
                  GENERATED ALWAYS AS (
                      CASE WHEN claimed_until IS NULL OR claimed_until < deliver_at
                           THEN deliver_at
                           ELSE claimed_until
                      END) STORED,
    created_at    timestamptz      NOT NULL DEFAULT now(),
    updated_at    timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, queue, timer_key)
);

-- The sweeper's only access path: per shard, in visibility order.
CREATE INDEX IF NOT EXISTS idx_log_timers_visible ON queen.log_timers (shard, visible_at);

-- Empties and refills in steady state: threshold vacuum, no heap truncation.
ALTER TABLE queen.log_timers SET (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

GRANT SELECT, INSERT, UPDATE, DELETE ON queen.log_timers TO PUBLIC;

-- =============================================================================
-- Procedures (broker/DESIGN.md, Timers). Every instant is the database's clock
-- (now(), the transaction's timestamp), so brokers' clocks never enter a
-- deliver_at. Lock spaces, in the global order: the request-path procedures
-- touch queen.log_timers only; the fire takes its timer rows first (SKIP
-- LOCKED, so it never waits in this space) and the partitions after them, in
-- the broker's transaction; the DLQ archive takes timer rows, then provisions
-- (queue, partition) and writes the leaf queen.log_dlq.
-- =============================================================================

-- An instant as the timer answers carry it: UTC, microseconds, a literal Z.
CREATE OR REPLACE FUNCTION queen.log_timers_instant_v1(p_at timestamptz)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- -----------------------------------------------------------------------------
-- queen.log_timers_apply_v1(tenant, ops, producer_sub) -> jsonb array
-- schedule / reschedule / cancel, answered index-aligned with p_ops. The broker
-- has checked each op's shape and normalised it to
--   {op, queue, timerKey, partition, delayMs, txn, payload (base64),
--    payloadZstd, encrypted, minted (the broker's message id)};
-- the checks below are the floor for any other caller. A (queue, timerKey)
-- appears at most once per call and the rows are written in (queue, timerKey)
-- COLLATE "C" order: with the tenant fixed that is one total order, so two
-- calls cannot deadlock whatever order their ops were listed in.
-- schedule and reschedule are one upsert (a retry after a lost answer is safe);
-- it resets attempts and the claim, since a rescheduled timer is a new message
-- under an old name. A row a broker holds (claim_token set and its lease
-- running) is out of the caller's hands: schedule, reschedule and cancel all
-- answer too_late for it. A cancel that finds no row answers absent, which may
-- mean already delivered (there is no tombstone); the caller's txn is echoed.
-- The reference broker's source settled what the spec leaves open: too_late
-- applies to reschedule as well as cancel, the txn is echoed on absent, and a
-- reschedule resets attempts and the claim.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_timers_apply_v1(p_tenant uuid, p_ops jsonb, p_producer_sub text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now     timestamptz := now();
    v_n       integer;
    v_out     jsonb[];
    v_rec     record;
    v_op      jsonb;
    v_fresh   boolean;
    v_mid     uuid;
    v_at      timestamptz;
    v_txn     text;
    v_exists  boolean;
BEGIN
    IF p_tenant IS NULL OR p_ops IS NULL OR jsonb_typeof(p_ops) <> 'array' THEN
        RAISE EXCEPTION 'timers_bad_body' USING ERRCODE = '22023';
    END IF;
    v_n := jsonb_array_length(p_ops);
    IF v_n = 0 THEN
        RETURN '[]'::jsonb;
    END IF;
    FOR v_rec IN SELECT e.value AS op FROM jsonb_array_elements(p_ops) e LOOP
        v_op := v_rec.op;
        IF jsonb_typeof(v_op) <> 'object'
           OR COALESCE(v_op->>'op', '') NOT IN ('schedule', 'reschedule', 'cancel')
           OR COALESCE(v_op->>'queue', '') = '' OR COALESCE(v_op->>'timerKey', '') = '' THEN
            RAISE EXCEPTION 'timers_bad_op' USING ERRCODE = '22023';
        END IF;
        IF v_op->>'op' <> 'cancel' AND (jsonb_typeof(v_op->'delayMs') IS DISTINCT FROM 'number'
               OR COALESCE(v_op->>'txn', '') = '' OR jsonb_typeof(v_op->'payload') IS DISTINCT FROM 'string'
               OR jsonb_typeof(v_op->'minted') IS DISTINCT FROM 'string') THEN
            RAISE EXCEPTION 'timers_bad_op' USING ERRCODE = '22023';
        END IF;
    END LOOP;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_ops) e
                GROUP BY e.value->>'queue', e.value->>'timerKey' HAVING count(*) > 1) THEN
        RAISE EXCEPTION 'timers_duplicate_key' USING ERRCODE = '22023';
    END IF;

    v_out := array_fill(NULL::jsonb, ARRAY[v_n]);
    FOR v_rec IN
        SELECT e.value AS op, e.ord::integer AS ord
          FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(value, ord)
         ORDER BY (e.value->>'queue') COLLATE "C", (e.value->>'timerKey') COLLATE "C"
    LOOP
        v_op := v_rec.op;
        IF v_op->>'op' = 'cancel' THEN
            DELETE FROM queen.log_timers t
             WHERE t.tenant_id = p_tenant AND t.queue = v_op->>'queue' AND t.timer_key = v_op->>'timerKey'
               AND (t.claim_token IS NULL OR t.claimed_until <= v_now)
            RETURNING t.txn INTO v_txn;
            IF FOUND THEN
                v_out[v_rec.ord] := jsonb_build_object('ok', true, 'status', 'cancelled',
                    'queue', v_op->>'queue', 'timerKey', v_op->>'timerKey', 'txn', v_txn);
            ELSE
                SELECT EXISTS (SELECT 1 FROM queen.log_timers t
                                WHERE t.tenant_id = p_tenant AND t.queue = v_op->>'queue'
                                  AND t.timer_key = v_op->>'timerKey') INTO v_exists;
                v_out[v_rec.ord] := jsonb_build_object('ok', false,
                    'status', CASE WHEN v_exists THEN 'too_late' ELSE 'absent' END,
                    'queue', v_op->>'queue', 'timerKey', v_op->>'timerKey', 'txn', v_op->'txn');
            END IF;
        ELSE
            INSERT INTO queen.log_timers AS t (tenant_id, queue, timer_key, "partition", deliver_at, txn,
                                               message_id, payload, payload_zstd, encrypted, producer_sub,
                                               created_at, updated_at)
            VALUES (p_tenant, v_op->>'queue', v_op->>'timerKey', COALESCE(NULLIF(v_op->>'partition', ''), 'Default'),
                    v_now + make_interval(secs => (v_op->>'delayMs')::double precision / 1000.0),
                    v_op->>'txn', (v_op->>'minted')::uuid, decode(v_op->>'payload', 'base64'),
                    COALESCE((v_op->>'payloadZstd')::boolean, false), COALESCE((v_op->>'encrypted')::boolean, false),
                    p_producer_sub, v_now, v_now)
            ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE SET
                "partition" = EXCLUDED."partition", deliver_at = EXCLUDED.deliver_at, txn = EXCLUDED.txn,
                message_id = EXCLUDED.message_id, payload = EXCLUDED.payload,
                payload_zstd = EXCLUDED.payload_zstd, encrypted = EXCLUDED.encrypted,
                producer_sub = EXCLUDED.producer_sub, attempts = 0, last_error = NULL,
                claimed_until = NULL, claim_token = NULL, updated_at = v_now
             WHERE t.claim_token IS NULL OR t.claimed_until <= v_now
            RETURNING (t.xmax = 0), t.message_id, t.deliver_at INTO v_fresh, v_mid, v_at;
            IF FOUND THEN
                v_out[v_rec.ord] := jsonb_build_object('ok', true,
                    'status', CASE WHEN v_fresh THEN 'scheduled' ELSE 'rescheduled' END,
                    'queue', v_op->>'queue', 'timerKey', v_op->>'timerKey', 'txn', v_op->>'txn',
                    'messageId', v_mid::text, 'deliverAt', queen.log_timers_instant_v1(v_at));
            ELSE
                v_out[v_rec.ord] := jsonb_build_object('ok', false, 'status', 'too_late',
                    'queue', v_op->>'queue', 'timerKey', v_op->>'timerKey', 'txn', v_op->>'txn');
            END IF;
        END IF;
    END LOOP;
    RETURN to_jsonb(v_out);
END;
$$;

-- One row as GET /timers/:queue/*key and the list show it; the list leaves the
-- payload out (p_payload false), so a page's size does not depend on payloads.
-- The payload is plain base64 on one line (encode() breaks lines every 76 characters).
-- claimed is "in a broker's hands": a row backing off after a failure has a
-- future claimed_until but no token and reads claimed false (it is cancellable).
CREATE OR REPLACE FUNCTION queen.log_timers_row_json_v1(t queen.log_timers, p_payload boolean)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
               'queue', t.queue, 'timerKey', t.timer_key, 'partition', t."partition",
               'deliverAt', queen.log_timers_instant_v1(t.deliver_at), 'txn', t.txn,
               'messageId', t.message_id::text)
        || CASE WHEN p_payload THEN jsonb_build_object('payload', translate(encode(t.payload, 'base64'), E'\n', '')) ELSE '{}'::jsonb END
        || jsonb_build_object(
               'payloadZstd', t.payload_zstd, 'encrypted', t.encrypted, 'producerSub', t.producer_sub,
               'attempts', t.attempts, 'lastError', t.last_error,
               'claimed', (t.claim_token IS NOT NULL AND t.claimed_until > now()),
               'createdAt', queen.log_timers_instant_v1(t.created_at),
               'updatedAt', queen.log_timers_instant_v1(t.updated_at))
$$;

-- queen.log_timers_get_v1(tenant, queue, key) -> {found: true, ...} or {found: false}
CREATE OR REPLACE FUNCTION queen.log_timers_get_v1(p_tenant uuid, p_queue text, p_timer_key text)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT COALESCE(
        (SELECT jsonb_build_object('found', true) || queen.log_timers_row_json_v1(t, true)
           FROM queen.log_timers t
          WHERE t.tenant_id = p_tenant AND t.queue = p_queue AND t.timer_key = p_timer_key),
        jsonb_build_object('found', false))
$$;

-- queen.log_timers_list_v1(tenant, queue, after, limit) -> {rows, truncated, nextAfter}
-- A keyset page of one queue's timers in timer_key byte order; p_after is an
-- exclusive cursor; the limit (default 100) is clamped to 1..1000, never refused.
CREATE OR REPLACE FUNCTION queen.log_timers_list_v1(p_tenant uuid, p_queue text, p_after text, p_limit integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_limit integer := LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000);
    v_rows  jsonb;
    v_n     integer;
    v_last  text;
BEGIN
    SELECT COALESCE(jsonb_agg(p.j ORDER BY p.k), '[]'::jsonb), count(*), max(p.k)
      INTO v_rows, v_n, v_last
      FROM (SELECT t.timer_key AS k, queen.log_timers_row_json_v1(t, false) AS j
              FROM queen.log_timers t
             WHERE t.tenant_id = p_tenant AND t.queue = p_queue
               AND (p_after IS NULL OR t.timer_key > p_after)
             ORDER BY t.timer_key
             LIMIT v_limit) p;
    IF v_n = v_limit AND EXISTS (SELECT 1 FROM queen.log_timers t
                                  WHERE t.tenant_id = p_tenant AND t.queue = p_queue AND t.timer_key > v_last) THEN
        RETURN jsonb_build_object('rows', v_rows, 'truncated', true, 'nextAfter', v_last);
    END IF;
    RETURN jsonb_build_object('rows', v_rows, 'truncated', false, 'nextAfter', NULL);
END;
$$;

-- queen.log_timers_count_v1(tenant, queue, prefix) -> {queue, prefix, count}
-- The exact number of one queue's timers whose key starts with p_prefix (a
-- literal prefix: % and _ are plain characters), over the primary key's range.
CREATE OR REPLACE FUNCTION queen.log_timers_count_v1(p_tenant uuid, p_queue text, p_prefix text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_bound text := queen.kv_prefix_bound_v1(p_prefix);
    v_count bigint;
BEGIN
    IF COALESCE(p_prefix, '') = '' THEN
        RAISE EXCEPTION 'timers_count_prefix_required' USING ERRCODE = '22023';
    END IF;
    SELECT count(*) INTO v_count
      FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant AND t.queue = p_queue
       AND t.timer_key >= p_prefix AND (v_bound IS NULL OR t.timer_key < v_bound)
       AND starts_with(t.timer_key, p_prefix);
    RETURN jsonb_build_object('queue', p_queue, 'prefix', p_prefix, 'count', v_count);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_timers_claim_v1(start_shard, lease_ms, max_rows) -> the claimed rows
-- Leaderless: every broker walks all 64 shards (starting at p_start_shard, so
-- brokers do not all begin at the same index head) through (shard, visible_at),
-- taking due rows FOR UPDATE SKIP LOCKED, so two brokers get disjoint sets and
-- neither ever waits. Each claimed row gets its own token and a lease of
-- p_lease_ms: its visible_at moves to the lease's end, so no one else sees it
-- until the lease runs out (a broker that dies holding claims loses nothing:
-- the rows come back when the lease ends). Rows are returned in the order they
-- became due. At least 8 rows a shard, so a small batch still drains a late
-- shard.
-- -----------------------------------------------------------------------------
DROP FUNCTION IF EXISTS queen.log_timers_claim_v1(integer, integer, integer);
CREATE FUNCTION queen.log_timers_claim_v1(p_start_shard integer, p_lease_ms integer, p_max_rows integer)
RETURNS TABLE (tenant_id uuid, queue text, timer_key text, "partition" text, txn text, message_id uuid,
               payload bytea, payload_zstd boolean, encrypted boolean, producer_sub text, attempts integer,
               claim_token uuid, late_ms bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := now();
    v_max   integer := GREATEST(COALESCE(p_max_rows, 200), 1);
    v_per   integer := GREATEST(ceil(GREATEST(COALESCE(p_max_rows, 200), 1) / 64.0)::integer, 8);
    v_lease interval := make_interval(secs => GREATEST(COALESCE(p_lease_ms, 30000), 1) / 1000.0);
BEGIN
    RETURN QUERY
    WITH picked AS MATERIALIZED (
        SELECT c.tenant_id, c.queue, c.timer_key, c.visible_at
          FROM generate_series(0, 63) AS g(i)
         CROSS JOIN LATERAL (
               SELECT z.tenant_id, z.queue, z.timer_key, z.visible_at
                 FROM queen.log_timers z
                WHERE z.shard = ((COALESCE(p_start_shard, 0) + g.i) % 64 + 64) % 64
                  AND z.visible_at <= v_now
                ORDER BY z.visible_at
                LIMIT v_per
                  FOR UPDATE SKIP LOCKED) c
         LIMIT v_max
    ), claimed AS (
        UPDATE queen.log_timers t
           SET claimed_until = v_now + v_lease, claim_token = gen_random_uuid(), updated_at = v_now
          FROM picked k
         WHERE t.tenant_id = k.tenant_id AND t.queue = k.queue AND t.timer_key = k.timer_key
        RETURNING t.tenant_id, t.queue, t.timer_key, t."partition", t.txn, t.message_id, t.payload,
                  t.payload_zstd, t.encrypted, t.producer_sub, t.attempts, t.claim_token, t.deliver_at
    )
    SELECT u.tenant_id, u.queue::text, u.timer_key::text, u."partition", u.txn, u.message_id, u.payload,
           u.payload_zstd, u.encrypted, u.producer_sub, u.attempts, u.claim_token,
           GREATEST(0, (EXTRACT(EPOCH FROM (v_now - u.deliver_at)) * 1000)::bigint)
      FROM claimed u
      JOIN picked k ON k.tenant_id = u.tenant_id AND k.queue = u.queue AND k.timer_key = u.timer_key
     ORDER BY k.visible_at, u.tenant_id, u.queue, u.timer_key;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_timers_hold_v1(tenant, queues[], keys[], tokens[]) -> held (queue, key)
-- The fire's first statement, in the broker's fire transaction: locks the named
-- rows, in (queue, timer_key) order, FOR UPDATE SKIP LOCKED (the fire never
-- waits in the timer space), keeping only those still under this claim (token
-- equal, lease running). A row cancelled, rescheduled or re-claimed by another
-- broker since the claim is simply not returned, and is not delivered.
-- -----------------------------------------------------------------------------
DROP FUNCTION IF EXISTS queen.log_timers_hold_v1(uuid, text[], text[], uuid[]);
CREATE FUNCTION queen.log_timers_hold_v1(p_tenant uuid, p_queues text[], p_keys text[], p_tokens uuid[])
RETURNS TABLE (queue text, timer_key text)
LANGUAGE sql AS $$
    SELECT l.queue::text, l.timer_key::text
      FROM (SELECT t.queue, t.timer_key
              FROM queen.log_timers t
              JOIN unnest(p_queues, p_keys, p_tokens) AS w(queue, timer_key, token)
                ON t.queue = w.queue AND t.timer_key = w.timer_key AND t.claim_token = w.token
             WHERE t.tenant_id = p_tenant AND t.claimed_until > now()
             ORDER BY t.queue, t.timer_key
               FOR UPDATE OF t SKIP LOCKED) l
$$;

-- queen.log_timers_settle_v1(tenant, queues[], keys[], delivered[]) -> rows touched
-- The fire's last statement, over rows the transaction already holds (no new
-- acquisition): a delivered timer is deleted (the message is in the log, in the
-- same transaction); a held row that was not delivered goes back at once
-- (token cleared, lease ended), so it need not wait for its lease.
CREATE OR REPLACE FUNCTION queen.log_timers_settle_v1(p_tenant uuid, p_queues text[], p_keys text[],
                                                       p_delivered boolean[])
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_deleted  integer;
    v_released integer;
BEGIN
    DELETE FROM queen.log_timers t
     USING unnest(p_queues, p_keys, p_delivered) AS w(queue, timer_key, delivered)
     WHERE w.delivered AND t.tenant_id = p_tenant AND t.queue = w.queue AND t.timer_key = w.timer_key;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    UPDATE queen.log_timers t
       SET claim_token = NULL, claimed_until = now(), updated_at = now()
      FROM unnest(p_queues, p_keys, p_delivered) AS w(queue, timer_key, delivered)
     WHERE NOT w.delivered AND t.tenant_id = p_tenant AND t.queue = w.queue AND t.timer_key = w.timer_key;
    GET DIAGNOSTICS v_released = ROW_COUNT;
    RETURN v_deleted + v_released;
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.log_timers_fail_v1(tenant, queues[], keys[], tokens[], backoff_ms, error,
--                          count_attempt, max_attempts) -> the exhausted keys
-- A fire that failed: the rows still under this claim go into backoff
-- (claimed_until = now + backoff, token cleared: cancellable meanwhile) with
-- last_error. Only a permanent failure spends an attempt (a database outage
-- must not send every timer to the DLQ). Returns the rows whose attempts
-- reached p_max_attempts, for the DLQ.
-- -----------------------------------------------------------------------------
DROP FUNCTION IF EXISTS queen.log_timers_fail_v1(uuid, text[], text[], uuid[], integer, text, boolean, integer);
CREATE FUNCTION queen.log_timers_fail_v1(p_tenant uuid, p_queues text[], p_keys text[], p_tokens uuid[],
                                         p_backoff_ms integer, p_error text, p_count_attempt boolean,
                                         p_max_attempts integer)
RETURNS TABLE (queue text, timer_key text, attempts integer)
LANGUAGE sql AS $$
    WITH mine AS MATERIALIZED (
        SELECT t.queue, t.timer_key
          FROM queen.log_timers t
          JOIN unnest(p_queues, p_keys, p_tokens) AS w(queue, timer_key, token)
            ON t.queue = w.queue AND t.timer_key = w.timer_key AND t.claim_token = w.token
         WHERE t.tenant_id = p_tenant
         ORDER BY t.queue, t.timer_key
           FOR UPDATE OF t
    ), upd AS (
        UPDATE queen.log_timers t
           SET claimed_until = now() + make_interval(secs => GREATEST(COALESCE(p_backoff_ms, 1000), 0) / 1000.0),
               claim_token = NULL,
               attempts = t.attempts + CASE WHEN p_count_attempt THEN 1 ELSE 0 END,
               last_error = left(p_error, 1000),
               updated_at = now()
          FROM mine m
         WHERE t.tenant_id = p_tenant AND t.queue = m.queue AND t.timer_key = m.timer_key
        RETURNING t.queue, t.timer_key, t.attempts
    )
    SELECT u.queue::text, u.timer_key::text, u.attempts FROM upd u
     WHERE u.attempts >= COALESCE(p_max_attempts, 5)
$$;

-- -----------------------------------------------------------------------------
-- queen.log_timers_dlq_v1(tenant, queue, key, payload, min_attempts) -> archived
-- An exhausted timer goes to its queue's DLQ under consumer group __timer__
-- (offset -1: it never had a position; group and offset as the reference's
-- source has them) and leaves log_timers, in one
-- transaction. The row is taken first (timer space), then the queue and
-- partition are provisioned (queue, partition spaces), then the leaf. Guarded
-- by attempts >= p_min_attempts and no claim, so a reschedule that landed since
-- the failure (attempts back to 0) is a new timer and is not archived.
-- p_payload is the broker's jsonb snapshot of the payload.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.log_timers_dlq_v1(p_tenant uuid, p_queue text, p_timer_key text,
                                                    p_payload jsonb, p_min_attempts integer)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_row queen.log_timers%ROWTYPE;
    v_pid uuid;
BEGIN
    SELECT * INTO v_row FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant AND t.queue = p_queue AND t.timer_key = p_timer_key
       AND t.attempts >= COALESCE(p_min_attempts, 5) AND t.claim_token IS NULL
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT p.partition_id INTO v_pid FROM queen.log_provision_v1(p_tenant, p_queue, v_row."partition") p;
    INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id, payload,
                               error, retry_count, failed_at)
    VALUES (v_pid, '__timer__', -1, v_row.message_id, v_row.txn, p_payload, v_row.last_error, v_row.attempts, now());
    DELETE FROM queen.log_timers t
     WHERE t.tenant_id = p_tenant AND t.queue = p_queue AND t.timer_key = p_timer_key;
    RETURN true;
END;
$$;

-- queen.log_timers_due_v1() -> milliseconds until the earliest row is visible
-- (0 when one is due now, NULL when the table is empty): 64 one-row seeks, the
-- sweeper's idle probe.
CREATE OR REPLACE FUNCTION queen.log_timers_due_v1()
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT GREATEST(0, (EXTRACT(EPOCH FROM (min(x.visible_at) - now())) * 1000)::bigint)
      FROM generate_series(0, 63) AS g(i)
     CROSS JOIN LATERAL (SELECT t.visible_at FROM queen.log_timers t
                          WHERE t.shard = g.i ORDER BY t.visible_at LIMIT 1) x
$$;

-- queen.log_timers_lag_v1(cap) -> (due, capped, oldest_late_ms): the sample
-- behind the sweeper-lag gauges, taken by each broker's metrics loop, never by
-- a scrape. due counts the rows visible and due now (nobody holds them), at
-- most ceil(cap / 64) a shard over the (shard, visible_at) index, so a backlog
-- costs a bounded range scan; capped says a shard reached its share and due is
-- a floor. oldest_late_ms is the lateness (now - deliver_at) of the worst of
-- the 64 shard heads: how long the oldest due timer has waited past its time.
CREATE OR REPLACE FUNCTION queen.log_timers_lag_v1(p_cap integer)
RETURNS TABLE (due bigint, capped boolean, oldest_late_ms bigint)
LANGUAGE sql STABLE AS $$
    WITH per AS (
        SELECT GREATEST(ceil(GREATEST(COALESCE(p_cap, 10000), 64) / 64.0)::integer, 1) AS n
    ), shard AS (
        SELECT (SELECT count(*) FROM (SELECT 1 FROM queen.log_timers t
                                        WHERE t.shard = g.i AND t.visible_at <= now()
                                        LIMIT (SELECT n FROM per)) d) AS due,
               (SELECT t.deliver_at FROM queen.log_timers t
                 WHERE t.shard = g.i AND t.visible_at <= now()
                 ORDER BY t.visible_at LIMIT 1) AS head
          FROM generate_series(0, 63) AS g(i)
    )
    SELECT COALESCE(sum(s.due), 0)::bigint,
           COALESCE(bool_or(s.due >= (SELECT n FROM per)), false),
           COALESCE(GREATEST(0, (EXTRACT(EPOCH FROM (now() - min(s.head))) * 1000)::bigint), 0)
      FROM shard s
$$;
