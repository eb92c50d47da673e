-- =============================================================================
-- 023_prometheus : the database-backed families of GET /metrics/prometheus (the
-- reference broker's families and names), read in one round trip. Cell-wide:
-- every replica serves the same numbers (dashboards aggregate them with max),
-- and the exposition carries no tenant label, so queues of different tenants
-- that share a name fold into one series. Read only.
-- =============================================================================

-- -----------------------------------------------------------------------------
-- queen.get_prometheus_metrics_v1:
--   system_totals: the lifetime counters of worker_metrics_summary (null when
--     the row is missing);
--   per_queue: per queue name, the newest minute bucket of each queue within
--     the last five minutes, folded across same-named queues: counters
--     summed, max lag the largest, avg lag weighted by pops, age the youngest;
--   dlq: dead letters now, in total and per queue name.
-- Only the last five minutes of queue_lag_metrics are read, so the scrape
-- cost does not grow with metrics retention.
-- -----------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.get_prometheus_metrics_v1()
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    WITH latest AS (
        SELECT DISTINCT ON (m.queue_id) m.*
          FROM queen.queue_lag_metrics m
         WHERE m.bucket_time >= now() - interval '5 minutes'
         ORDER BY m.queue_id, m.bucket_time DESC
    ),
    per_queue AS (
        SELECT q.name AS queue,
               SUM(l.pop_count) AS pop_count,
               CASE WHEN SUM(l.pop_count) > 0
                    THEN ROUND(SUM(l.avg_lag_ms * l.pop_count)::numeric / SUM(l.pop_count)) ELSE 0 END AS avg_lag_ms,
               MAX(l.max_lag_ms) AS max_lag_ms,
               SUM(l.push_request_count) AS push_request_count,
               SUM(l.push_message_count) AS push_message_count,
               SUM(l.pop_empty_count) AS pop_empty_count,
               SUM(l.ack_request_count) AS ack_request_count,
               SUM(l.ack_success_count) AS ack_success_count,
               SUM(l.ack_failed_count) AS ack_failed_count,
               SUM(l.transaction_count) AS transaction_count,
               SUM(COALESCE(l.conflated_count, 0)) AS conflated_count,
               SUM(COALESCE(l.parked_count, 0)) AS parked_count,
               MIN(EXTRACT(EPOCH FROM (now() - l.bucket_time)))::bigint AS bucket_age_seconds
          FROM latest l
          JOIN queen.queues q ON q.id = l.queue_id
         GROUP BY q.name
    ),
    dlq_per_queue AS (
        SELECT q.name AS queue, COUNT(*) AS count
          FROM queen.log_dlq d
          JOIN queen.log_partitions p ON p.id = d.partition_id
          JOIN queen.queues q ON q.id = p.queue_id
         GROUP BY q.name
    )
    SELECT jsonb_build_object(
        'system_totals', (SELECT jsonb_build_object(
                                     'pushRequests', s.total_push_requests,
                                     'popRequests', s.total_pop_requests,
                                     'ackRequests', s.total_ack_requests,
                                     'transactions', s.total_transactions,
                                     'pushMessages', s.total_push_messages,
                                     'popMessages', s.total_pop_messages,
                                     'ackMessages', s.total_ack_messages,
                                     'ackSuccess', s.total_ack_success,
                                     'ackFailed', s.total_ack_failed,
                                     'dbErrors', s.total_db_errors,
                                     'dlqCount', s.total_dlq)
                            FROM queen.worker_metrics_summary s
                           WHERE s.id = 1),
        'per_queue', COALESCE((SELECT jsonb_agg(to_jsonb(pq) ORDER BY pq.queue) FROM per_queue pq), '[]'::jsonb),
        'dlq', jsonb_build_object(
            'total', (SELECT COUNT(*) FROM queen.log_dlq),
            'per_queue', COALESCE((SELECT jsonb_agg(to_jsonb(d) ORDER BY d.queue) FROM dlq_per_queue d), '[]'::jsonb)))
$$;
