package io.queen.broker.http;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.ObservabilityService;

import java.sql.SQLException;
import java.time.Duration;

/**
 * {@code /api/v1/analytics/*} (api-management.md 9): time series read from the tables the
 * per-replica metrics collector fills, bucketed like {@code /api/v1/status}; window defaults to the
 * last hour. system-metrics, worker-metrics and postgres-stats are cell-wide; queue-lag,
 * queue-ops, queue-parked-replicas and retention are scoped to the request's tenant.
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
             .get("/retention", this::retention);
    }

    private void systemMetrics(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.systemMetrics(TimeWindows.window(q, DEFAULT_SPAN),
                q.string("hostname").orElse(null), q.string("workerId").orElse(null)));
    }

    private void workerMetrics(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        Integer workerId = q.string("workerId").isPresent() ? q.integer("workerId", 0) : null;
        JsonText.send(res, observability.workerMetrics(TimeWindows.window(q, DEFAULT_SPAN),
                q.string("queue").orElse(null), q.string("hostname").orElse(null), workerId));
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
        JsonText.send(res, observability.retention(tenancy.of(req), TimeWindows.window(q, DEFAULT_SPAN), queue(q)));
    }

    private static String queue(Params q) {
        return q.string("queue").orElse(null);
    }
}
