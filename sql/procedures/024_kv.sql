-- =============================================================================
-- 024_kv : the transactional key/value store (/api/v1/kv, the console reads
-- under /api/v1/resources/kv, later the transaction-wire kv rider): its
-- tables, then queen.kv_apply_v1 with its pure helpers, kv_list_v1 and
-- kv_namespaces_v1 (broker/DESIGN.md, KV store).
--
-- queen.kv is the outermost lock space of the engine (kv -> log_timers ->
-- advisory -> queues -> log_partitions -> log_consumers -> leaves); rows are
-- taken in (namespace, key) COLLATE "C" order. Nothing here names a
-- partition_id, on purpose.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.kv
-- One value per (tenant, namespace, key); the tenant is part of the key, so
-- no write can conflict across tenants. Name columns use COLLATE "C" so lock
-- order and prefix/cursor order are byte order on every machine. version is an
-- opaque token drawn from kv_version_seq (equality only). expires_at NULL means
-- forever (an explicit opt-in). shard spreads the sweeper's work over a fixed
-- 64 buckets and is stored so it can never move.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv (
    tenant_id  uuid                NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    namespace  text COLLATE "C"    NOT NULL,
    key        text COLLATE "C"    NOT NULL,
    value      jsonb               NOT NULL,
    version    bigint              NOT NULL,
    expires_at timestamptz,
    shard      smallint            NOT NULL
               GENERATED ALWAYS AS ((hashtextextended(key, 0) & 63)::smallint) STORED,
    created_at timestamptz         NOT NULL DEFAULT now(),
    updated_at timestamptz         NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, namespace, key)
);

-- Version tokens; a large cache avoids a WAL record per write.
CREATE SEQUENCE IF NOT EXISTS queen.kv_version_seq AS bigint START WITH 1 CACHE 1000;

-- Update-heavy counters and delete-heavy TTL rows: HOT headroom, threshold
-- vacuum, and never heap truncation (its ACCESS EXCLUSIVE lock would block
-- every reader of this table).
ALTER TABLE queen.kv SET (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- The only secondary index; its one reader is the sweeper's expiry prune.
-- Partial, so forever-keys cost nothing here.
CREATE INDEX IF NOT EXISTS idx_kv_shard_expires
    ON queen.kv (shard, expires_at) WHERE expires_at IS NOT NULL;

-- -----------------------------------------------------------------------------
-- queen.kv_quota
-- Per-tenant limits for KV and timers together, written by an operator or the
-- control plane. NULL = unlimited; with tenancy on, a missing row is a denial.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv_quota (
    tenant_id           uuid        PRIMARY KEY,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    enabled             boolean     NOT NULL DEFAULT true,
    max_rows            bigint,
    max_bytes           bigint,
    max_timers          bigint,
    max_timer_horizon_s bigint,
    max_reads_per_sec   integer,
    max_writes_per_sec  integer
);

-- -----------------------------------------------------------------------------
-- queen.kv_usage
-- Per-tenant measured occupancy, overwritten by the sweeper's usage rollup
-- (last writer wins on computed_at) and polled by every broker's quota
-- enforcer. Never touched by a request-path write.
-- -----------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS queen.kv_usage (
    tenant_id    uuid        PRIMARY KEY,
    computed_at  timestamptz NOT NULL DEFAULT now(),
    kv_rows      bigint      NOT NULL DEFAULT 0,
    kv_bytes     bigint      NOT NULL DEFAULT 0,
    timer_rows   bigint      NOT NULL DEFAULT 0,
    timer_bytes  bigint      NOT NULL DEFAULT 0,
    timer_oldest timestamptz
);

-- Small and cold: threshold vacuum without the unthrottled cost setting, which
-- is reserved for the hot engine tables.
ALTER TABLE queen.kv_quota SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);
ALTER TABLE queen.kv_usage SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    vacuum_truncate = off
);

-- Procedures are SECURITY INVOKER; USAGE (not SELECT) on the sequence so its
-- last_value cannot be read as a global write counter.
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv_quota TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON queen.kv_usage TO PUBLIC;
GRANT USAGE ON SEQUENCE queen.kv_version_seq TO PUBLIC;

-- =============================================================================
-- The request path. Everything below is CREATE OR REPLACE: it is applied at
-- every boot, like the rest of the procedures.
--
-- Visibility: a row is live while expires_at is NULL or later than the
-- call's instant (the transaction timestamp, one instant for every op of a
-- call). An expired row is absent to every reader and every precondition the
-- moment it expires, whether or not anything has deleted it yet; a write may
-- overwrite it as if it were not there.
--
-- Versions are drawn from kv_version_seq, never computed from the previous
-- one, so a key that expired and was written again can never hand out a
-- version an old holder still has. Callers compare them for equality only.
-- The "version" of an absent or expired key is 0, which is what lets
-- expect: 0 mean "must not exist".
-- =============================================================================

-- -----------------------------------------------------------------------------
-- Pure helpers. Not STRICT on purpose: a NULL expires_at is "forever" and a
-- NULL version is "no row", both ordinary inputs.
-- -----------------------------------------------------------------------------

-- Is a row with this expiry visible at p_now?
CREATE OR REPLACE FUNCTION queen.kv_alive_v1(p_expires_at timestamptz, p_now timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT p_expires_at IS NULL OR p_expires_at > p_now
$$;

-- The version a caller sees: the row's, or 0 when there is no live row.
CREATE OR REPLACE FUNCTION queen.kv_seen_version_v1(p_version bigint, p_expires_at timestamptz,
                                                    p_now timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_version IS NOT NULL AND queen.kv_alive_v1(p_expires_at, p_now)
                THEN p_version ELSE 0::bigint END
$$;

-- The number an incr starts from: a live JSON number, else 0 (no row, an
-- expired row of any type, or a live value that is not a number, which incr
-- refuses before it gets here).
CREATE OR REPLACE FUNCTION queen.kv_counter_v1(p_value jsonb, p_expires_at timestamptz, p_now timestamptz)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN jsonb_typeof(p_value) = 'number' AND queen.kv_alive_v1(p_expires_at, p_now)
                THEN (p_value #>> '{}')::numeric ELSE 0::numeric END
$$;

-- The smallest text above every text starting with p_prefix in code point
-- order (which is COLLATE "C" order in a UTF-8 database), or NULL when none
-- exists. It only bounds the index range of a prefix read; starts_with()
-- decides membership, so a NULL bound costs speed, never correctness. The
-- last character is replaced by its successor; U+D7FF's successor is U+E000
-- (chr() refuses surrogates), and U+10FFFF has none, so it is dropped and the
-- character before it advanced instead.
CREATE OR REPLACE FUNCTION queen.kv_prefix_bound_v1(p_prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    v_head text := p_prefix;
    v_cp   integer;
BEGIN
    WHILE v_head IS NOT NULL AND v_head <> '' LOOP
        v_cp := ascii(right(v_head, 1));
        v_head := left(v_head, -1);
        IF v_cp < 1114111 THEN
            RETURN v_head || chr(CASE WHEN v_cp = 55295 THEN 57344 ELSE v_cp + 1 END);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

-- A timestamp as the KV answers carry it: UTC, microseconds, a literal Z,
-- whatever the session's TimeZone; NULL stays NULL (a forever key).
CREATE OR REPLACE FUNCTION queen.kv_instant_v1(p_at timestamptz)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Namespace and key rules. A namespace is registered nowhere (it exists while
-- a row does), so its charset is checked: a typo would otherwise create a
-- namespace that reads empty for ever. The rule is the reference broker's:
-- lower case letters, digits, '.', '_' and '-', starting with a letter or
-- digit, at most 64 characters. A key is any non-empty text of at most 512
-- bytes (UTF-8), the floor under QUEEN_KV_MAX_KEY_BYTES that keeps the primary
-- key's index tuples far below their size limit. p_key NULL checks the
-- namespace alone. The messages are stable identifiers the broker reads;
-- names appear only in the DETAIL.
CREATE OR REPLACE FUNCTION queen.kv_check_names_v1(p_where text, p_ns text, p_key text,
                                                   p_key_required boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    IF p_ns IS NULL OR p_ns !~ '^[a-z0-9][a-z0-9._-]{0,63}$' THEN
        RAISE EXCEPTION 'kv_bad_namespace' USING ERRCODE = '22023',
              DETAIL = format('%s: namespace must match ^[a-z0-9][a-z0-9._-]{0,63}$', p_where);
    END IF;
    IF NOT p_key_required THEN
        RETURN;
    END IF;
    IF p_key IS NULL OR p_key = '' THEN
        RAISE EXCEPTION 'kv_bad_key' USING ERRCODE = '22023',
              DETAIL = format('%s: the key must be a non-empty string', p_where);
    END IF;
    IF octet_length(p_key) > 512 THEN
        RAISE EXCEPTION 'kv_key_too_large' USING ERRCODE = '22001',
              DETAIL = format('%s: the key is %s bytes, at most 512 are allowed', p_where, octet_length(p_key));
    END IF;
END;
$$;

-- Is p_value a JSON number with an integral value inside [p_min, p_max] (a
-- NULL bound is open)? 3.0 counts as the integer 3. Never raises: a string
-- is simply not an integer.
CREATE OR REPLACE FUNCTION queen.kv_is_integer_v1(p_value jsonb, p_min numeric, p_max numeric)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    v_n numeric;
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'number' THEN
        RETURN false;
    END IF;
    v_n := (p_value #>> '{}')::numeric;
    RETURN v_n = trunc(v_n) AND (p_min IS NULL OR v_n >= p_min) AND (p_max IS NULL OR v_n <= p_max);
END;
$$;

-- One operation's shape, checked before anything is written; raises 22023
-- (22001 for a value over p_max_value_bytes) naming the op by its index. The
-- broker runs the same rules before it calls, so this is the floor for any
-- other caller. Returns the op's name.
CREATE OR REPLACE FUNCTION queen.kv_check_op_v1(p_op jsonb, p_index integer, p_in_wire boolean,
                                                p_max_value_bytes integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    C_MAX_TTL_SECONDS CONSTANT numeric := 100000000000;   -- about 3,000 years
    v_where   text := format('operation %s', p_index);
    v_kind    text;
    v_expiry  integer := 0;
    v_field   text;
BEGIN
    IF jsonb_typeof(p_op) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
              DETAIL = format('%s is not a JSON object', v_where);
    END IF;
    v_kind := CASE WHEN jsonb_typeof(p_op -> 'op') = 'string' THEN p_op ->> 'op' END;
    IF v_kind IS NULL OR v_kind NOT IN ('get', 'getMany', 'getPrefix', 'put', 'putIfAbsent', 'delete', 'incr') THEN
        RAISE EXCEPTION 'kv_unknown_op' USING ERRCODE = '22023',
              DETAIL = format('%s: op must be one of get, getMany, getPrefix, put, putIfAbsent, delete, incr',
                              v_where);
    END IF;
    -- The tenant is an argument of the call, never an input of an op.
    IF p_op ?| ARRAY['tenant', 'tenantId', '_tenant'] THEN
        RAISE EXCEPTION 'kv_tenant_not_an_input' USING ERRCODE = '22023',
              DETAIL = format('%s carries a tenant field; the tenant comes from the request', v_where);
    END IF;
    IF jsonb_typeof(p_op -> 'ns') IS DISTINCT FROM 'string' THEN
        RAISE EXCEPTION 'kv_bad_namespace' USING ERRCODE = '22023',
              DETAIL = format('%s: ns must be a string', v_where);
    END IF;

    IF v_kind = 'getPrefix' THEN
        IF p_in_wire THEN
            RAISE EXCEPTION 'kv_get_prefix_not_allowed_in_transaction' USING ERRCODE = '22023',
                  DETAIL = format('%s: getPrefix is only served by POST /api/v1/kv', v_where);
        END IF;
        IF jsonb_typeof(p_op -> 'prefix') IS DISTINCT FROM 'string' OR p_op ->> 'prefix' = '' THEN
            RAISE EXCEPTION 'kv_prefix_required' USING ERRCODE = '22023',
                  DETAIL = format('%s: getPrefix needs a non-empty prefix', v_where);
        END IF;
        PERFORM queen.kv_check_names_v1(v_where, p_op ->> 'ns', p_op ->> 'prefix');
        IF p_op ? 'limit' AND NOT queen.kv_is_integer_v1(p_op -> 'limit', NULL, NULL) THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: limit must be an integer', v_where);
        END IF;
        IF p_op ? 'after' AND jsonb_typeof(p_op -> 'after') NOT IN ('string', 'null') THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: after must be a key', v_where);
        END IF;
        IF p_op ? 'keysOnly' AND jsonb_typeof(p_op -> 'keysOnly') IS DISTINCT FROM 'boolean' THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: keysOnly must be a boolean', v_where);
        END IF;
        RETURN v_kind;
    END IF;

    IF v_kind = 'getMany' THEN
        IF jsonb_typeof(p_op -> 'keys') IS DISTINCT FROM 'array' THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: getMany needs a keys array', v_where);
        END IF;
        PERFORM queen.kv_check_names_v1(v_where, p_op ->> 'ns', NULL, false);
        IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_op -> 'keys') AS e(k)
                    WHERE jsonb_typeof(e.k) <> 'string') THEN
            RAISE EXCEPTION 'kv_bad_key' USING ERRCODE = '22023',
                  DETAIL = format('%s: every key must be a string', v_where);
        END IF;
        PERFORM queen.kv_check_names_v1(v_where, p_op ->> 'ns', e.k)
           FROM jsonb_array_elements_text(p_op -> 'keys') AS e(k);
        RETURN v_kind;
    END IF;

    IF jsonb_typeof(p_op -> 'key') IS DISTINCT FROM 'string' THEN
        RAISE EXCEPTION 'kv_bad_key' USING ERRCODE = '22023',
              DETAIL = format('%s: key must be a non-empty string', v_where);
    END IF;
    PERFORM queen.kv_check_names_v1(v_where, p_op ->> 'ns', p_op ->> 'key');
    IF v_kind = 'get' THEN
        RETURN v_kind;
    END IF;

    IF p_op ? 'required' AND jsonb_typeof(p_op -> 'required') IS DISTINCT FROM 'boolean' THEN
        RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
              DETAIL = format('%s: required must be a boolean', v_where);
    END IF;

    IF v_kind IN ('put', 'putIfAbsent', 'incr') THEN
        -- Exactly one expiry, always: ttlSeconds (an integer > 0) or forever: true.
        IF p_op ? 'ttlSeconds' THEN
            IF NOT queen.kv_is_integer_v1(p_op -> 'ttlSeconds', 1, C_MAX_TTL_SECONDS) THEN
                RAISE EXCEPTION 'kv_bad_ttl' USING ERRCODE = '22023',
                      DETAIL = format('%s: ttlSeconds must be an integer from 1 to %s', v_where, C_MAX_TTL_SECONDS);
            END IF;
            v_expiry := v_expiry + 1;
        END IF;
        IF p_op ? 'forever' THEN
            IF jsonb_typeof(p_op -> 'forever') IS DISTINCT FROM 'boolean' THEN
                RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                      DETAIL = format('%s: forever must be a boolean', v_where);
            END IF;
            IF (p_op -> 'forever') = 'true'::jsonb THEN
                v_expiry := v_expiry + 1;
            END IF;
        END IF;
        IF v_expiry <> 1 THEN
            RAISE EXCEPTION 'kv_expiry_not_specified' USING ERRCODE = '22023',
                  DETAIL = format('%s: exactly one of ttlSeconds (an integer > 0) and forever: true is required',
                                  v_where);
        END IF;
    END IF;

    IF v_kind IN ('put', 'putIfAbsent') THEN
        IF NOT p_op ? 'value' THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: %s needs a value (null is a value; no value is not)', v_where, v_kind);
        END IF;
        IF octet_length((p_op -> 'value')::text) > p_max_value_bytes THEN
            RAISE EXCEPTION 'kv_value_too_large' USING ERRCODE = '22001',
                  DETAIL = format('%s: the value is %s bytes, at most %s are allowed', v_where,
                                  octet_length((p_op -> 'value')::text), p_max_value_bytes);
        END IF;
    END IF;

    IF v_kind IN ('put', 'putIfAbsent', 'delete') AND p_op ? 'expect' THEN
        -- An expect that is present must be a version: null is a caller's bug,
        -- not a request for an unconditional write.
        IF NOT queen.kv_is_integer_v1(p_op -> 'expect', 0, 9223372036854775807) THEN
            RAISE EXCEPTION 'kv_bad_expect' USING ERRCODE = '22023',
                  DETAIL = format('%s: expect must be a version (a non-negative integer; 0 = must not exist)',
                                  v_where);
        END IF;
        IF v_kind = 'putIfAbsent' AND (p_op ->> 'expect')::numeric <> 0 THEN
            RAISE EXCEPTION 'kv_bad_expect' USING ERRCODE = '22023',
                  DETAIL = format('%s: putIfAbsent is put with expect 0; another expect contradicts it', v_where);
        END IF;
    END IF;

    IF v_kind = 'incr' THEN
        IF p_op ? 'expect' THEN
            RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                  DETAIL = format('%s: incr takes no expect', v_where);
        END IF;
        FOREACH v_field IN ARRAY ARRAY['delta', 'min', 'max'] LOOP
            IF (v_field = 'delta' OR p_op ? v_field)
               AND jsonb_typeof(p_op -> v_field) IS DISTINCT FROM 'number' THEN
                RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023',
                      DETAIL = format('%s: %s must be a number', v_where, v_field);
            END IF;
        END LOOP;
    END IF;
    RETURN v_kind;
END;
$$;

-- One stored row as a read answers it; p_keys_only leaves the value out.
CREATE OR REPLACE FUNCTION queen.kv_row_json_v1(p_key text, p_value jsonb, p_version bigint,
                                                p_expires_at timestamptz, p_updated_at timestamptz,
                                                p_keys_only boolean)
RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_keys_only
                THEN jsonb_build_object('key', p_key, 'version', p_version,
                                        'expiresAt', queen.kv_instant_v1(p_expires_at),
                                        'updatedAt', queen.kv_instant_v1(p_updated_at))
                ELSE jsonb_build_object('key', p_key, 'value', p_value, 'version', p_version,
                                        'expiresAt', queen.kv_instant_v1(p_expires_at),
                                        'updatedAt', queen.kv_instant_v1(p_updated_at))
           END
$$;

-- -----------------------------------------------------------------------------
-- queen.kv_prefix_page_v1: one keyset page of a namespace under a prefix, as
-- getPrefix and the console's list both answer it: keys in byte order after
-- p_after (an exclusive cursor), at most p_limit rows, and no more value text
-- than p_budget bytes (the row that crosses the line is kept). With
-- p_include_expired the rows past their expiry that nothing has deleted yet
-- are listed too; with p_mark_expired every row says whether it is expired
-- (the console's list does, getPrefix does not). Answers {rows,
-- truncated, nextAfter, bytes}, bytes being the value text the page spent.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_prefix_page_v1(p_tenant uuid, p_namespace text, p_prefix text,
                                                   p_after text, p_limit integer, p_keys_only boolean,
                                                   p_include_expired boolean, p_mark_expired boolean,
                                                   p_budget bigint, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_bound text := queen.kv_prefix_bound_v1(p_prefix);
    v_rows  jsonb;
    v_spent bigint;
    v_kept  bigint;
    v_total bigint;
    v_last  text;
BEGIN
    WITH page AS (
        SELECT k.key, k.value, k.version, k.expires_at, k.updated_at,
               CASE WHEN p_keys_only THEN 0 ELSE octet_length(k.value::text) END::bigint AS bytes
          FROM queen.kv k
         WHERE k.tenant_id = p_tenant
           AND k.namespace = p_namespace
           AND k.key >= p_prefix
           AND (v_bound IS NULL OR k.key < v_bound)
           AND starts_with(k.key, p_prefix)
           AND (p_after IS NULL OR k.key > p_after)
           AND (p_include_expired OR queen.kv_alive_v1(k.expires_at, p_now))
         ORDER BY k.key
         LIMIT p_limit + 1
    ), ranked AS (
        SELECT p.*, row_number() OVER (ORDER BY p.key) AS n,
               COALESCE(sum(p.bytes) OVER (ORDER BY p.key ROWS BETWEEN UNBOUNDED PRECEDING
                                                             AND 1 PRECEDING), 0) AS before
          FROM page p
    )
    SELECT COALESCE(jsonb_agg(CASE WHEN p_mark_expired
                                   THEN queen.kv_row_json_v1(r.key, r.value, r.version, r.expires_at,
                                                             r.updated_at, p_keys_only)
                                        || jsonb_build_object('expired', NOT queen.kv_alive_v1(r.expires_at, p_now))
                                   ELSE queen.kv_row_json_v1(r.key, r.value, r.version, r.expires_at,
                                                             r.updated_at, p_keys_only)
                              END ORDER BY r.key)
                        FILTER (WHERE r.n <= p_limit AND r.before < p_budget), '[]'::jsonb),
           COALESCE(sum(r.bytes) FILTER (WHERE r.n <= p_limit AND r.before < p_budget), 0),
           count(*) FILTER (WHERE r.n <= p_limit AND r.before < p_budget),
           count(*),
           max(r.key) FILTER (WHERE r.n <= p_limit AND r.before < p_budget)
      INTO v_rows, v_spent, v_kept, v_total, v_last
      FROM ranked r;
    RETURN jsonb_build_object('rows', v_rows,
                              'truncated', v_kept < v_total,
                              'nextAfter', CASE WHEN v_kept < v_total THEN to_jsonb(v_last) END,
                              'bytes', v_spent);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.kv_apply_v1: one call of POST /api/v1/kv (and of the path routes),
-- a batch of operations applied in one statement, so in one transaction when
-- the caller is in autocommit. Returns a JSON array index-aligned with p_ops:
-- element i answers operation i and carries "index" and "op".
--
-- Two passes. The first checks every op (kv_check_op_v1), that no key is
-- written twice in one call, and the call's budgets: p_max_ops operations and
-- p_max_keys keys (a getMany counts its keys, a getPrefix its clamped limit,
-- anything else one). Nothing is written before all of it passed, so a bad
-- op costs no savepoint and no half-applied batch.
--
-- The second applies the ops ordered by (namespace, key) COLLATE "C" with the
-- input position as tiebreak, which is the lock order of queen.kv
-- (broker/DESIGN.md, Lock order): every op that locks a row names one key,
-- and one key is written at most once per call, so two calls lock their rows
-- in one total order and cannot deadlock each other. The multi-key reads
-- (getMany, getPrefix) lock nothing and run after everything else, so they
-- see the call's own writes.
--
-- A write whose precondition fails is a verdict, not an error: applied false
-- with a reason (exists, absent, version, limit, type) and the current value
-- and version, so the loser needs no second read. With "required": true it
-- raises instead (SQLSTATE 23514, message kv_precondition_failed, DETAIL the
-- JSON {index, op, reason, version, value}), which rolls the whole call back.
--
-- Reads share p_max_read_bytes of value text per call: a getMany or
-- getPrefix keeps rows while the bytes before them are under what is left
-- (so the row that crosses the line is kept) and says truncated; a single
-- get is always answered and spends from the same budget.
--
-- Every value comes from a parameter; nothing is spliced into SQL text.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_apply_v1(
    p_tenant          uuid,
    p_ops             jsonb,
    p_max_ops         integer DEFAULT 256,
    p_max_keys        integer DEFAULT 1024,
    p_max_value_bytes integer DEFAULT 65536,
    p_prefix_limit    integer DEFAULT 1000,
    p_max_read_bytes  bigint  DEFAULT 4194304,
    p_in_wire         boolean DEFAULT false
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    C_PREFIX_DEFAULT CONSTANT integer := 100;
    v_now     timestamptz := now();
    v_n       integer;
    v_keys    bigint;
    v_budget  bigint := COALESCE(p_max_read_bytes, 4194304);
    v_out     jsonb[];
    v_op      record;
    v_kind    text;
    v_ns      text;
    v_key     text;
    v_ix      integer;
    v_res     jsonb;
    -- write state
    v_expect  bigint;
    v_expiry  timestamptz;
    v_value   jsonb;
    v_applied boolean;
    v_reason  text;
    v_new_val jsonb;
    v_new_ver bigint;
    v_cur_val jsonb;
    v_cur_ver bigint;
    v_cur_exp timestamptz;
    v_cur_upd timestamptz;
    v_found   boolean;
    v_alive   boolean;
    v_delta   numeric;
    v_min     numeric;
    v_max     numeric;
    v_next    numeric;
    -- read state
    v_rows    jsonb;
    v_missing jsonb;
    v_spent   bigint;
    v_total   bigint;
    v_prefix  text;
    v_limit   integer;
    v_page    jsonb;
BEGIN
    IF p_tenant IS NULL THEN
        RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023', DETAIL = 'kv_apply_v1 needs a tenant';
    END IF;
    IF jsonb_typeof(p_ops) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023', DETAIL = 'the operations must be a JSON array';
    END IF;
    v_n := jsonb_array_length(p_ops);
    IF v_n = 0 THEN
        RETURN '[]'::jsonb;
    END IF;
    IF v_n > p_max_ops THEN
        RAISE EXCEPTION 'kv_too_many_ops' USING ERRCODE = '22023',
              DETAIL = format('%s operations in one call, at most %s are allowed', v_n, p_max_ops);
    END IF;

    -- ------------------------------------------------------------ pass 1
    FOR v_op IN
        SELECT e.op AS body, (e.i - 1)::integer AS ix
          FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(op, i)
         ORDER BY e.i
    LOOP
        PERFORM queen.kv_check_op_v1(v_op.body, v_op.ix, COALESCE(p_in_wire, false), p_max_value_bytes);
    END LOOP;

    IF EXISTS (SELECT 1
                 FROM jsonb_array_elements(p_ops) AS e(op)
                WHERE e.op ->> 'op' IN ('put', 'putIfAbsent', 'delete', 'incr')
                GROUP BY (e.op ->> 'ns') COLLATE "C", (e.op ->> 'key') COLLATE "C"
               HAVING count(*) > 1) THEN
        -- Refused rather than applied in order, as the reference broker does: it is what keeps the
        -- lock order total (one row per key), and a client relies on the refusal being the same.
        RAISE EXCEPTION 'kv_duplicate_key_in_call' USING ERRCODE = '22023',
              DETAIL = 'a key may be written at most once per call';
    END IF;

    SELECT COALESCE(sum(CASE e.op ->> 'op'
                            WHEN 'getMany' THEN jsonb_array_length(e.op -> 'keys')::numeric
                            WHEN 'getPrefix' THEN LEAST(GREATEST(COALESCE((e.op ->> 'limit')::numeric,
                                                                          C_PREFIX_DEFAULT), 1), p_prefix_limit)
                            ELSE 1
                        END), 0)::bigint
      INTO v_keys
      FROM jsonb_array_elements(p_ops) AS e(op);
    IF v_keys > p_max_keys THEN
        RAISE EXCEPTION 'kv_too_many_keys' USING ERRCODE = '22023',
              DETAIL = format('%s keys in one call, at most %s are allowed', v_keys, p_max_keys);
    END IF;

    -- ------------------------------------------------------------ pass 2
    v_out := array_fill(NULL::jsonb, ARRAY[v_n]);
    FOR v_op IN
        SELECT e.op AS body, (e.i - 1)::integer AS ix
          FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(op, i)
         ORDER BY CASE WHEN e.op ->> 'op' IN ('getMany', 'getPrefix') THEN 1 ELSE 0 END,
                  (e.op ->> 'ns') COLLATE "C",
                  (COALESCE(e.op ->> 'key', e.op ->> 'prefix', '')) COLLATE "C",
                  e.i
    LOOP
        v_kind := v_op.body ->> 'op';
        v_ns := v_op.body ->> 'ns';
        v_key := v_op.body ->> 'key';
        v_ix := v_op.ix;
        v_res := NULL;
        v_applied := false;
        v_reason := NULL;
        v_new_val := NULL;
        v_new_ver := NULL;
        v_cur_val := NULL;
        v_cur_ver := NULL;
        v_cur_exp := NULL;
        v_cur_upd := NULL;
        v_expect := NULL;
        v_expiry := NULL;
        IF v_kind = 'putIfAbsent' THEN
            v_expect := 0;
        ELSIF v_kind IN ('put', 'delete') AND v_op.body ? 'expect' THEN
            v_expect := (v_op.body ->> 'expect')::bigint;
        END IF;
        IF v_kind IN ('put', 'putIfAbsent', 'incr') AND v_op.body ? 'ttlSeconds' THEN
            v_expiry := v_now + make_interval(secs => (v_op.body ->> 'ttlSeconds')::double precision);
        END IF;

        IF v_kind = 'get' THEN
            SELECT k.value, k.version, k.expires_at, k.updated_at
              INTO v_cur_val, v_cur_ver, v_cur_exp, v_cur_upd
              FROM queen.kv k
             WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key;
            IF FOUND AND queen.kv_alive_v1(v_cur_exp, v_now) THEN
                v_budget := v_budget - octet_length(v_cur_val::text);
                v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'found', true)
                         || queen.kv_row_json_v1(v_key, v_cur_val, v_cur_ver, v_cur_exp, v_cur_upd, false);
            ELSE
                -- found is its own field: a stored JSON null is a value.
                v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'found', false, 'key', v_key);
            END IF;

        ELSIF v_kind = 'getMany' THEN
            WITH wanted AS (
                SELECT DISTINCT w.k AS key FROM jsonb_array_elements_text(v_op.body -> 'keys') AS w(k)
            ), live AS (
                SELECT k.key, k.value, k.version, k.expires_at, k.updated_at,
                       octet_length(k.value::text)::bigint AS bytes
                  FROM wanted w
                  JOIN queen.kv k ON k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = w.key
                 WHERE queen.kv_alive_v1(k.expires_at, v_now)
            ), ranked AS (
                SELECT l.*, COALESCE(sum(l.bytes) OVER (ORDER BY l.key ROWS BETWEEN UNBOUNDED PRECEDING
                                                                          AND 1 PRECEDING), 0) AS before
                  FROM live l
            )
            SELECT COALESCE(jsonb_agg(queen.kv_row_json_v1(r.key, r.value, r.version, r.expires_at,
                                                           r.updated_at, false) ORDER BY r.key)
                                FILTER (WHERE r.before < v_budget), '[]'::jsonb),
                   COALESCE(sum(r.bytes) FILTER (WHERE r.before < v_budget), 0),
                   count(*) FILTER (WHERE r.before >= v_budget)
              INTO v_rows, v_spent, v_total
              FROM ranked r;
            v_budget := v_budget - v_spent;
            -- Absence is reported, never left to be worked out; a key the
            -- byte budget cut is in neither list (truncated says so).
            SELECT COALESCE(jsonb_agg(to_jsonb(w.k) ORDER BY w.i), '[]'::jsonb)
              INTO v_missing
              FROM jsonb_array_elements_text(v_op.body -> 'keys') WITH ORDINALITY AS w(k, i)
             WHERE NOT EXISTS (SELECT 1 FROM queen.kv k
                                WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = w.k
                                  AND queen.kv_alive_v1(k.expires_at, v_now));
            v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'rows', v_rows, 'missing', v_missing,
                                        'truncated', v_total > 0);

        ELSIF v_kind = 'getPrefix' THEN
            v_prefix := v_op.body ->> 'prefix';
            -- Clamped, never refused.
            v_limit := LEAST(GREATEST(COALESCE((v_op.body ->> 'limit')::numeric, C_PREFIX_DEFAULT), 1),
                             p_prefix_limit)::integer;
            v_page := queen.kv_prefix_page_v1(p_tenant, v_ns, v_prefix, NULLIF(v_op.body ->> 'after', ''),
                                              v_limit, COALESCE((v_op.body ->> 'keysOnly')::boolean, false),
                                              false, false, v_budget, v_now);
            v_budget := v_budget - (v_page ->> 'bytes')::bigint;
            -- after is an exclusive keyset cursor: the last key of this page.
            v_res := jsonb_build_object('index', v_ix, 'op', v_kind) || (v_page - 'bytes');

        ELSIF v_kind IN ('put', 'putIfAbsent') THEN
            v_value := v_op.body -> 'value';
            IF v_expect IS NULL THEN
                -- Unconditional: value and expiry both replaced (the old expiry
                -- is never inherited). Overwriting an expired row starts a new
                -- lineage, so created_at restarts.
                INSERT INTO queen.kv AS k (tenant_id, namespace, key, value, version, expires_at,
                                           created_at, updated_at)
                VALUES (p_tenant, v_ns, v_key, v_value, nextval('queen.kv_version_seq'), v_expiry, v_now, v_now)
                ON CONFLICT (tenant_id, namespace, key) DO UPDATE
                   SET value = EXCLUDED.value,
                       version = EXCLUDED.version,
                       expires_at = EXCLUDED.expires_at,
                       created_at = CASE WHEN queen.kv_alive_v1(k.expires_at, v_now)
                                         THEN k.created_at ELSE EXCLUDED.created_at END,
                       updated_at = EXCLUDED.updated_at
                RETURNING k.version INTO v_new_ver;
                v_applied := true;
            ELSIF v_expect = 0 THEN
                -- Must not exist. ON CONFLICT locks the existing row before its
                -- WHERE is evaluated, so of concurrent callers exactly one
                -- applies; an expired row counts as absent and is replaced.
                INSERT INTO queen.kv AS k (tenant_id, namespace, key, value, version, expires_at,
                                           created_at, updated_at)
                VALUES (p_tenant, v_ns, v_key, v_value, nextval('queen.kv_version_seq'), v_expiry, v_now, v_now)
                ON CONFLICT (tenant_id, namespace, key) DO UPDATE
                   SET value = EXCLUDED.value,
                       version = EXCLUDED.version,
                       expires_at = EXCLUDED.expires_at,
                       created_at = EXCLUDED.created_at,
                       updated_at = EXCLUDED.updated_at
                 WHERE NOT queen.kv_alive_v1(k.expires_at, v_now)
                RETURNING k.version INTO v_new_ver;
                v_applied := v_new_ver IS NOT NULL;
                IF NOT v_applied THEN
                    -- The row is locked by now, and this statement's fresh
                    -- snapshot sees the winner even if it committed after the
                    -- INSERT's snapshot was taken.
                    SELECT k.value, k.version, k.expires_at INTO v_cur_val, v_cur_ver, v_cur_exp
                      FROM queen.kv k
                     WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key;
                    v_reason := 'exists';
                END IF;
            ELSE
                -- expect N > 0: an update of the live row at version N, never
                -- an insert. The row is locked first and decided on its
                -- newest version.
                SELECT k.value, k.version, k.expires_at INTO v_cur_val, v_cur_ver, v_cur_exp
                  FROM queen.kv k
                 WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                   FOR UPDATE;
                IF queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) = v_expect THEN
                    UPDATE queen.kv k
                       SET value = v_value, version = nextval('queen.kv_version_seq'),
                           expires_at = v_expiry, updated_at = v_now
                     WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                    RETURNING k.version INTO v_new_ver;
                    v_applied := true;
                ELSE
                    v_reason := CASE WHEN queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) = 0
                                     THEN 'absent' ELSE 'version' END;
                END IF;
            END IF;
            IF v_applied THEN
                v_new_val := v_value;
            END IF;

        ELSIF v_kind = 'delete' THEN
            IF v_expect IS NULL THEN
                DELETE FROM queen.kv k
                 WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                RETURNING k.value, k.version, k.expires_at INTO v_cur_val, v_cur_ver, v_cur_exp;
                -- An expired row goes too, but it was not there to delete.
                v_applied := queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) <> 0;
                IF v_applied THEN
                    v_new_val := v_cur_val;
                    v_new_ver := v_cur_ver;
                ELSE
                    v_reason := 'absent';
                END IF;
            ELSE
                SELECT k.value, k.version, k.expires_at INTO v_cur_val, v_cur_ver, v_cur_exp
                  FROM queen.kv k
                 WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                   FOR UPDATE;
                IF v_expect = 0 THEN
                    -- "Must not exist": done when it does not.
                    v_applied := queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) = 0;
                    IF v_applied THEN
                        v_new_ver := 0;
                    ELSE
                        v_reason := 'exists';
                    END IF;
                ELSIF queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) = v_expect THEN
                    DELETE FROM queen.kv k
                     WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key;
                    v_applied := true;
                    v_new_val := v_cur_val;
                    v_new_ver := v_cur_ver;
                ELSE
                    v_reason := CASE WHEN queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now) = 0
                                     THEN 'absent' ELSE 'version' END;
                END IF;
            END IF;

        ELSIF v_kind = 'incr' THEN
            v_delta := (v_op.body ->> 'delta')::numeric;
            v_min := (v_op.body ->> 'min')::numeric;
            v_max := (v_op.body ->> 'max')::numeric;
            -- Lock the row (if any), decide on its newest version, write. A
            -- concurrent first incr can insert between our read and our
            -- insert; the insert then does nothing and the next turn reads
            -- (and locks) the winner's row.
            LOOP
                SELECT k.value, k.version, k.expires_at INTO v_cur_val, v_cur_ver, v_cur_exp
                  FROM queen.kv k
                 WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                   FOR UPDATE;
                v_found := FOUND;
                v_alive := v_found AND queen.kv_alive_v1(v_cur_exp, v_now);
                IF v_alive AND jsonb_typeof(v_cur_val) <> 'number' THEN
                    v_reason := 'type';
                    EXIT;
                END IF;
                v_next := queen.kv_counter_v1(v_cur_val, v_cur_exp, v_now) + v_delta;
                -- No saturation: a result outside [min, max] writes nothing,
                -- so with max "applied" is the admission decision, on the
                -- first call of a window too.
                IF (v_min IS NOT NULL AND v_next < v_min) OR (v_max IS NOT NULL AND v_next > v_max) THEN
                    v_reason := 'limit';
                    EXIT;
                END IF;
                IF v_found THEN
                    -- The TTL is the creator's: a live row keeps its expiry (a
                    -- fixed window closes even under load); an expired one
                    -- starts over with this op's.
                    UPDATE queen.kv k
                       SET value = to_jsonb(trim_scale(v_next)),
                           version = nextval('queen.kv_version_seq'),
                           expires_at = CASE WHEN v_alive THEN k.expires_at ELSE v_expiry END,
                           created_at = CASE WHEN v_alive THEN k.created_at ELSE v_now END,
                           updated_at = v_now
                     WHERE k.tenant_id = p_tenant AND k.namespace = v_ns AND k.key = v_key
                    RETURNING k.value, k.version INTO v_new_val, v_new_ver;
                    v_applied := true;
                    EXIT;
                END IF;
                INSERT INTO queen.kv (tenant_id, namespace, key, value, version, expires_at, created_at, updated_at)
                VALUES (p_tenant, v_ns, v_key, to_jsonb(trim_scale(v_next)), nextval('queen.kv_version_seq'),
                        v_expiry, v_now, v_now)
                ON CONFLICT (tenant_id, namespace, key) DO NOTHING
                RETURNING value, version INTO v_new_val, v_new_ver;
                IF v_new_ver IS NOT NULL THEN
                    v_applied := true;
                    EXIT;
                END IF;
            END LOOP;
            IF NOT v_applied THEN
                -- The counter as it stands (0 when absent, expired or not a
                -- number, as the reference broker answers it).
                v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'applied', false, 'reason', v_reason,
                                            'key', v_key,
                                            'value', to_jsonb(trim_scale(queen.kv_counter_v1(v_cur_val, v_cur_exp,
                                                                                             v_now))),
                                            'version', queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now));
            END IF;
        END IF;

        IF v_res IS NULL THEN
            -- put, putIfAbsent, delete, incr: the same shape applied or not; a
            -- loser gets the current value and version (an expired row has
            -- neither).
            IF v_applied THEN
                v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'applied', true, 'key', v_key,
                                            'value', v_new_val, 'version', COALESCE(v_new_ver, 0));
            ELSE
                v_res := jsonb_build_object('index', v_ix, 'op', v_kind, 'applied', false, 'reason', v_reason,
                                            'key', v_key,
                                            'value', CASE WHEN queen.kv_alive_v1(v_cur_exp, v_now)
                                                          THEN v_cur_val END,
                                            'version', queen.kv_seen_version_v1(v_cur_ver, v_cur_exp, v_now));
            END IF;
        END IF;
        -- required: a lost precondition fails the whole call (nothing of it
        -- stays written), with the verdict in the DETAIL for the broker.
        IF v_kind IN ('put', 'putIfAbsent', 'delete', 'incr') AND NOT v_applied
           AND COALESCE((v_op.body ->> 'required')::boolean, false) THEN
            RAISE EXCEPTION 'kv_precondition_failed' USING ERRCODE = '23514',
                  DETAIL = jsonb_build_object('index', v_ix, 'op', v_kind, 'reason', v_reason,
                                              'version', v_res -> 'version', 'value', v_res -> 'value')::text;
        END IF;
        v_out[v_ix + 1] := v_res;
    END LOOP;

    IF EXISTS (SELECT 1 FROM unnest(v_out) AS r(x) WHERE r.x IS NULL) THEN
        RAISE EXCEPTION 'kv_result_misaligned' USING ERRCODE = 'XX000',
              DETAIL = format('%s operations, an answer missing', v_n);
    END IF;
    RETURN to_jsonb(v_out);
END;
$$;

-- -----------------------------------------------------------------------------
-- queen.kv_namespaces_v1: every namespace of a tenant with its number of rows,
-- in byte order. Rows are counted whether live or expired and not yet swept:
-- an expired row still occupies its namespace. A console read.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_namespaces_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object('namespace', g.namespace, 'keys', g.keys)
                              ORDER BY g.namespace), '[]'::jsonb)
      FROM (SELECT k.namespace, count(*) AS keys
              FROM queen.kv k
             WHERE k.tenant_id = p_tenant
             GROUP BY k.namespace) g
$$;

-- -----------------------------------------------------------------------------
-- queen.kv_list_v1: one keyset page of one namespace for a console. Unlike
-- getPrefix the prefix may be empty (the whole namespace), and with
-- p_include_expired the rows past their expiry that nothing has deleted yet
-- are listed too; every row says whether it is expired. limit defaults to
-- 100, clamped to 1..p_prefix_limit; the page also stops at p_max_read_bytes
-- of value text (the crossing row kept). Answer {rows, truncated, nextAfter,
-- bytes}, bytes being the value bytes the page spent.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_list_v1(
    p_tenant          uuid,
    p_namespace       text,
    p_prefix          text,
    p_after           text,
    p_limit           integer,
    p_keys_only       boolean,
    p_include_expired boolean,
    p_prefix_limit    integer DEFAULT 1000,
    p_max_read_bytes  bigint  DEFAULT 4194304
) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_tenant IS NULL THEN
        RAISE EXCEPTION 'kv_bad_request' USING ERRCODE = '22023', DETAIL = 'kv_list_v1 needs a tenant';
    END IF;
    PERFORM queen.kv_check_names_v1('list', p_namespace, NULL, false);
    RETURN queen.kv_prefix_page_v1(p_tenant, p_namespace, COALESCE(p_prefix, ''), NULLIF(p_after, ''),
                                   LEAST(GREATEST(COALESCE(p_limit, 100), 1), p_prefix_limit),
                                   COALESCE(p_keys_only, false), COALESCE(p_include_expired, false), true,
                                   COALESCE(p_max_read_bytes, 4194304), now());
END;
$$;
