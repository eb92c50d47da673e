-- =============================================================================
-- 020_log_partition_counters : attaches the partition-lifecycle counters
-- (trigger functions in 019_worker_metrics) to queen.log_partitions.
--
-- A file of its own because it must run after both 001 (the table) and 019
-- (the functions), so a fresh database gets the triggers on its first boot.
-- Each attachment is made only when absent: DROP TRIGGER takes ACCESS
-- EXCLUSIVE and CREATE TRIGGER SHARE ROW EXCLUSIVE on the engine's hottest
-- table, so re-creating them at every boot would stall every push and pop
-- behind each rolling restart. Changing an attachment therefore needs a manual
-- DROP TRIGGER; changing a function body takes effect at the next boot.
-- =============================================================================

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                   WHERE tgrelid = 'queen.log_partitions'::regclass
                     AND tgname = 'trg_partitions_created_counter') THEN
        CREATE TRIGGER trg_partitions_created_counter
            AFTER INSERT ON queen.log_partitions
            REFERENCING NEW TABLE AS new_partitions
            FOR EACH STATEMENT EXECUTE FUNCTION queen.log_partitions_created_trigger();
    END IF;
END;
$$;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                   WHERE tgrelid = 'queen.log_partitions'::regclass
                     AND tgname = 'trg_partitions_deleted_counter') THEN
        CREATE TRIGGER trg_partitions_deleted_counter
            AFTER DELETE ON queen.log_partitions
            REFERENCING OLD TABLE AS old_partitions
            FOR EACH STATEMENT EXECUTE FUNCTION queen.log_partitions_deleted_trigger();
    END IF;
END;
$$;
