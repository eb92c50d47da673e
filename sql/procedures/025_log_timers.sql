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
