-- =============================================================================
-- 021_postgres_stats : GET /api/v1/analytics/postgres-stats, a diagnostic
-- snapshot of the PostgreSQL the broker runs on, limited to this database and
-- its queen schema (pg_stat_activity spans the whole server, so it is
-- filtered to the current database). Cell-wide, no parameters, read only.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_postgres_stats_v1: {timestamp, database, databaseCache,
-- tableCache, indexCache, cacheSummary, deadTuples, hotUpdates,
-- activeQueries, autovacuumStatus, bufferConfig, bufferUsage, tableSizes}.
-- Ratios are percentages with two decimals, null when there was no access.
-- bufferUsage needs the pg_buffercache extension and is [] without it.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_postgres_stats_v1()
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_buffer_usage jsonb := '[]'::jsonb;
BEGIN
    IF to_regclass('pg_buffercache') IS NOT NULL THEN
        -- Dynamic so the function applies where the extension is absent.
        EXECUTE $q$
            SELECT COALESCE(jsonb_agg(jsonb_build_object(
                       'object', b.relname,
                       'bufferedSize', pg_size_pretty(b.buffers * current_setting('block_size')::bigint),
                       'bufferedBytes', b.buffers * current_setting('block_size')::bigint,
                       'percentOfCache', ROUND(100.0 * b.buffers
                                               / NULLIF((SELECT s.setting::numeric FROM pg_settings s
                                                          WHERE s.name = 'shared_buffers'), 0), 2))
                   ORDER BY b.buffers DESC), '[]'::jsonb)
              FROM (SELECT c.relname, COUNT(*) AS buffers
                      FROM pg_buffercache bc
                      JOIN pg_class c ON bc.relfilenode = pg_relation_filenode(c.oid)
                      JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = 'queen'
                     GROUP BY c.relname
                     ORDER BY COUNT(*) DESC
                     LIMIT 20) b
        $q$ INTO v_buffer_usage;
    END IF;

    RETURN jsonb_build_object(
        'timestamp', queen.obs_iso_v1(now()),
        'database', current_database(),
        'databaseCache', COALESCE((
            SELECT jsonb_build_object(
                       'database', d.datname,
                       'diskReads', d.blks_read,
                       'cacheHits', d.blks_hit,
                       'cacheHitRatio', ROUND(d.blks_hit * 100.0 / NULLIF(d.blks_hit + d.blks_read, 0), 2))
              FROM pg_stat_database d
             WHERE d.datname = current_database()), '{}'::jsonb),
        'tableCache', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'schema', t.schemaname,
                       'table', t.relname,
                       'diskReads', t.heap_blks_read,
                       'cacheHits', t.heap_blks_hit,
                       'cacheHitRatio', ROUND(t.heap_blks_hit * 100.0 / NULLIF(t.heap_blks_hit + t.heap_blks_read, 0), 2))
                   ORDER BY t.heap_blks_read DESC NULLS LAST, t.relname)
              FROM pg_statio_user_tables t
             WHERE t.schemaname = 'queen'), '[]'::jsonb),
        'indexCache', COALESCE((
            SELECT jsonb_agg(i.o ORDER BY i.reads DESC NULLS LAST, i.name)
              FROM (SELECT x.idx_blks_read AS reads, x.indexrelname AS name,
                           jsonb_build_object(
                               'schema', x.schemaname,
                               'table', x.relname,
                               'index', x.indexrelname,
                               'diskReads', x.idx_blks_read,
                               'cacheHits', x.idx_blks_hit,
                               'cacheHitRatio', ROUND(x.idx_blks_hit * 100.0 / NULLIF(x.idx_blks_hit + x.idx_blks_read, 0), 2)) AS o
                      FROM pg_statio_user_indexes x
                     WHERE x.schemaname = 'queen'
                     ORDER BY x.idx_blks_read DESC NULLS LAST, x.indexrelname
                     LIMIT 20) i), '[]'::jsonb),
        'cacheSummary', jsonb_build_object(
            'tables', (SELECT jsonb_build_object(
                                  'diskReads', COALESCE(SUM(t.heap_blks_read), 0),
                                  'cacheHits', COALESCE(SUM(t.heap_blks_hit), 0),
                                  'hitRatio', ROUND(SUM(t.heap_blks_hit) * 100.0
                                                    / NULLIF(SUM(t.heap_blks_hit) + SUM(t.heap_blks_read), 0), 2))
                         FROM pg_statio_user_tables t WHERE t.schemaname = 'queen'),
            'indexes', (SELECT jsonb_build_object(
                                   'diskReads', COALESCE(SUM(x.idx_blks_read), 0),
                                   'cacheHits', COALESCE(SUM(x.idx_blks_hit), 0),
                                   'hitRatio', ROUND(SUM(x.idx_blks_hit) * 100.0
                                                     / NULLIF(SUM(x.idx_blks_hit) + SUM(x.idx_blks_read), 0), 2))
                          FROM pg_statio_user_indexes x WHERE x.schemaname = 'queen')),
        'deadTuples', COALESCE((
            SELECT jsonb_agg(d.o ORDER BY d.dead DESC, d.name)
              FROM (SELECT t.n_dead_tup AS dead, t.relname AS name,
                           jsonb_build_object(
                               'schema', t.schemaname,
                               'table', t.relname,
                               'deadTuples', t.n_dead_tup,
                               'liveTuples', t.n_live_tup,
                               'deadPercentage', ROUND(t.n_dead_tup * 100.0 / NULLIF(t.n_live_tup, 0), 2),
                               'lastVacuum', queen.obs_iso_v1(t.last_vacuum),
                               'lastAutovacuum', queen.obs_iso_v1(t.last_autovacuum)) AS o
                      FROM pg_stat_user_tables t
                     WHERE t.schemaname = 'queen' AND t.n_dead_tup > 0
                     ORDER BY t.n_dead_tup DESC, t.relname
                     LIMIT 15) d), '[]'::jsonb),
        'hotUpdates', COALESCE((
            SELECT jsonb_agg(h.o ORDER BY h.updates DESC, h.name)
              FROM (SELECT t.n_tup_upd AS updates, t.relname AS name,
                           jsonb_build_object(
                               'schema', t.schemaname,
                               'table', t.relname,
                               'totalUpdates', t.n_tup_upd,
                               'hotUpdates', t.n_tup_hot_upd,
                               'hotUpdatePercentage', ROUND(t.n_tup_hot_upd * 100.0 / NULLIF(t.n_tup_upd, 0), 2)) AS o
                      FROM pg_stat_user_tables t
                     WHERE t.schemaname = 'queen' AND t.n_tup_upd > 0
                     ORDER BY t.n_tup_upd DESC, t.relname
                     LIMIT 15) h), '[]'::jsonb),
        'activeQueries', COALESCE((
            SELECT jsonb_agg(a.o ORDER BY a.started)
              FROM (SELECT s.query_start AS started,
                           jsonb_build_object(
                               'pid', s.pid,
                               'duration', EXTRACT(EPOCH FROM (now() - s.query_start)),
                               'state', s.state,
                               'query', left(s.query, 200),
                               'waitEventType', s.wait_event_type,
                               'waitEvent', s.wait_event) AS o
                      FROM pg_stat_activity s
                     WHERE s.datname = current_database()
                       AND s.state <> 'idle'
                       AND s.query_start < now() - interval '1 second'
                       AND s.pid <> pg_backend_pid()
                     ORDER BY s.query_start
                     LIMIT 10) a), '[]'::jsonb),
        'autovacuumStatus', COALESCE((
            SELECT jsonb_agg(v.o ORDER BY v.dead DESC, v.name)
              FROM (SELECT t.n_dead_tup AS dead, t.relname AS name,
                           jsonb_build_object(
                               'table', t.relname,
                               'lastAutovacuum', queen.obs_iso_v1(t.last_autovacuum),
                               'deadTuples', t.n_dead_tup,
                               'autovacuumCount', t.autovacuum_count,
                               'autoanalyzeCount', t.autoanalyze_count) AS o
                      FROM pg_stat_user_tables t
                     WHERE t.schemaname = 'queen' AND t.n_dead_tup > 1000
                     ORDER BY t.n_dead_tup DESC, t.relname
                     LIMIT 10) v), '[]'::jsonb),
        'bufferConfig', COALESCE((
            SELECT jsonb_build_object(
                       'sharedBuffers', s.setting,
                       'sharedBuffersSize', pg_size_pretty(s.setting::bigint * current_setting('block_size')::bigint))
              FROM pg_settings s
             WHERE s.name = 'shared_buffers'), '{}'::jsonb),
        'bufferUsage', v_buffer_usage,
        'tableSizes', COALESCE((
            SELECT jsonb_agg(z.o ORDER BY z.bytes DESC, z.name)
              FROM (SELECT pg_total_relation_size(c.oid) AS bytes, c.relname AS name,
                           jsonb_build_object(
                               'table', c.relname,
                               'totalSize', pg_size_pretty(pg_total_relation_size(c.oid)),
                               'totalSizeBytes', pg_total_relation_size(c.oid),
                               'tableSize', pg_size_pretty(pg_relation_size(c.oid)),
                               'tableSizeBytes', pg_relation_size(c.oid),
                               'indexSize', pg_size_pretty(pg_indexes_size(c.oid)),
                               'indexSizeBytes', pg_indexes_size(c.oid)) AS o
                      FROM pg_class c
                      JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = 'queen' AND c.relkind = 'r'
                     ORDER BY pg_total_relation_size(c.oid) DESC, c.relname
                     LIMIT 20) z), '[]'::jsonb));
END;
$$;
