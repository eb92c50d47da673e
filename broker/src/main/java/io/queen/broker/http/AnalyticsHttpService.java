package io.queen.broker.http;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.ObservabilityService;
import io.queen.broker.engine.WorkloadReport;

import java.sql.SQLException;
import java.time.Duration;

/**
 * {@code /api/v1/analytics/*} (broker/DESIGN.md, Management plane): time series read from the tables the
 * per-replica metrics collector fills, bucketed like {@code /api/v1/status}; window defaults to the
 * last hour. system-metrics, worker-metrics and postgres-stats are cell-wide; queue-lag,
 * queue-ops, queue-parked-replicas, retention and the 1.5.3 workload reads (workload,
 * dlq-signatures, partition-liveness) are scoped to the request's tenant.
 */
public final class AnalyticsHttpService implements HttpService {
    private static final Duration DEFAULT_SPAN = Duration.ofHours(1);

    private final ObservabilityService observability;
    private final Tenancy tenancy;

    public AnalyticsHttpService(ObservabilityService observability, Tenancy tenancy) {
        this.observability = observability;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/system-metrics", this::systemMetrics)
             .get("/worker-metrics", this::workerMetrics)
             .get("/postgres-stats", this::postgresStats)
             .get("/queue-lag", this::queueLag)
             .get("/queue-ops", this::queueOps)
             .get("/queue-parked-replicas", this::parkedReplicas)
             .get("/retention", this::retention)
             .get("/workload", this::workload)
             .get("/dlq-signatures", this::deadLetterSignatures)
             .get("/partition-liveness", this::partitionLiveness);
    }

    private void systemMetrics(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.systemMetrics(TimeWindows.window(q, DEFAULT_SPAN),
                q.name("hostname", Names.HOSTNAME).orElse(null), q.name("workerId", Names.WORKER_ID).orElse(null)));
    }

    private void workerMetrics(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        Integer workerId = q.string("workerId").isPresent() ? q.integer("workerId", 0) : null;
        JsonText.send(res, observability.workerMetrics(TimeWindows.window(q, DEFAULT_SPAN),
                q.name("queue", Names.QUEUE).orElse(null), q.name("hostname", Names.HOSTNAME).orElse(null), workerId));
    }

    private void postgresStats(ServerRequest req, ServerResponse res) throws SQLException {
        JsonText.send(res, observability.postgresStats());
    }

    private void queueLag(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.queueLag(tenancy.of(req), TimeWindows.window(q, DEFAULT_SPAN), queue(q)));
    }

    private void queueOps(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.queueOps(tenancy.of(req), TimeWindows.window(q, DEFAULT_SPAN), queue(q)));
    }

    private void parkedReplicas(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.parkedReplicas(tenancy.of(req), TimeWindows.window(q, DEFAULT_SPAN),
                queue(q)));
    }

    private void retention(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        WorkloadReport.GroupBy groupBy = groupBy(q);
        ObservabilityService.Window w = TimeWindows.window(q, DEFAULT_SPAN);
        // Without groupBy the answer stays exactly the historical one.
        JsonText.send(res, groupBy == null ? observability.retention(tenancy.of(req), w, queue(q))
                : observability.retention(tenancy.of(req), w, queue(q), groupBy));
    }

    private void workload(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        WorkloadReport.GroupBy groupBy = groupBy(q);
        // namespace= and task= with no value are filters for the empty label (the reference broker's reading).
        WorkloadReport.Filter filter = new WorkloadReport.Filter(q.text("namespace", Names.NAMESPACE).orElse(null),
                q.text("task", Names.TASK).orElse(null), queue(q));
        try {
            JsonText.send(res, observability.workload(tenancy.of(req), TimeWindows.window(q, DEFAULT_SPAN),
                    groupBy == null ? WorkloadReport.GroupBy.NAMESPACE : groupBy, filter));
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }

    private void deadLetterSignatures(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        String queue = queue(q);
        if (queue == null) {
            // Without a queue the sample would span the tenant's whole DLQ; refused as the reference broker does.
            throw new BadRequestException("queue required");
        }
        JsonText.send(res, observability.deadLetterSignatures(tenancy.of(req), queue,
                Math.clamp(q.integer("limit", 200), 1, 1000)));
    }

    private void partitionLiveness(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.partitionLiveness(tenancy.of(req), queue(q),
                q.text("namespace", Names.NAMESPACE).orElse(null), q.text("task", Names.TASK).orElse(null),
                Math.clamp(q.integer("limit", 20), 1, 200)));
    }

    /** Null when absent or empty; anything but namespace, task or queue is a 400 {"error":"bad groupBy"}. */
    private static WorkloadReport.GroupBy groupBy(Params q) {
        String raw = q.string("groupBy").orElse(null);
        if (raw == null) {
            return null;
        }
        WorkloadReport.GroupBy g = WorkloadReport.GroupBy.parse(raw);
        if (g == null) {
            throw new BadRequestException("bad groupBy");
        }
        return g;
    }

    private static String queue(Params q) {
        return q.name("queue", Names.QUEUE).orElse(null);
    }
}
