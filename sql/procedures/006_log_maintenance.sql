-- 006_log_maintenance: retention / txns-purge / max-wait eviction / partition-cleanup step procedures; filled by the maintenance (management-plane) capability.

-- Owned here per the catalogue: the retention analytics readers scan newest first.
CREATE INDEX IF NOT EXISTS idx_retention_history_executed_at
    ON queen.retention_history (executed_at DESC);
