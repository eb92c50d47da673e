package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.DatabaseHealth;
import io.queen.broker.engine.ObservabilityService;
import io.queen.broker.engine.PushSpool;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * The status family under {@code /api/v1} (broker/DESIGN.md, Management plane). {@code /status},
 * {@code /status/buffers} and {@code /stats/refresh} are cell-wide; {@code /status/queues},
 * {@code /status/queues/:queue} and {@code /status/analytics} are scoped to the request's tenant.
 * Time windows default to the last hour ({@code /status/analytics}: the last 24 hours).
 */
public final class StatusHttpService implements HttpService {
    private static final Logger LOG = Logger.getLogger(StatusHttpService.class.getName());
    private static final Set<String> INTERVALS = Set.of("minute", "hour", "day");
    /** Beyond this many buckets a /status/analytics window is refused rather than generated. */
    static final long MAX_BUCKETS = 10_000;

    private final ObservabilityService observability;
    private final PushSpool spool;
    private final DatabaseHealth health;
    private final Tenancy tenancy;

    public StatusHttpService(ObservabilityService observability, PushSpool spool, DatabaseHealth health,
                             Tenancy tenancy) {
        this.observability = observability;
        this.spool = spool;
        this.health = health;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/status", this::status)
             .get("/status/analytics", this::analytics)
             .get("/status/buffers", this::buffers)
             .get("/status/queues", this::queues)
             .get("/status/queues/{queue}", this::queue)
             .post("/stats/refresh", this::refresh);
    }

    /** Cell-wide: the tenant header is not read here, as in the reference. */
    private void status(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        JsonText.send(res, observability.status(TimeWindows.window(q, Duration.ofHours(1)), scope(q)));
    }

    private void queues(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        Params q = new Params(req.query());
        // from / to are accepted for compatibility and validated, but the listing is a snapshot.
        TimeWindows.window(q, Duration.ofHours(1));
        int limit = q.integer("limit", 100);
        int offset = q.integer("offset", 0);
        Params.checkPage(limit, offset);
        JsonText.send(res, observability.statusQueues(tenant, scope(q), limit, offset));
    }

    private void queue(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        String name = Names.path(req, "queue", Names.QUEUE);
        String detail = observability.queueDetail(tenant, name);
        if (detail == null) {
            throw new NotFoundException("Queue not found");
        }
        JsonText.send(res, detail);
    }

    private void analytics(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        Params q = new Params(req.query());
        ObservabilityService.Window w = TimeWindows.window(q, Duration.ofHours(24));
        // An unknown interval falls back to hour, as in the reference.
        String interval = q.name("interval", Names.FILTER).map(s -> s.trim().toLowerCase(Locale.ROOT))
                .filter(INTERVALS::contains).orElse("hour");
        long buckets = Duration.between(w.from(), w.to()).getSeconds() / switch (interval) {
            case "minute" -> 60L;
            case "day" -> 86_400L;
            default -> 3_600L;
        };
        if (buckets > MAX_BUCKETS) {
            throw new BadRequestException("time window too long for interval=" + interval + ": " + buckets
                    + " buckets, at most " + MAX_BUCKETS + "; use a wider interval or a shorter window");
        }
        JsonText.send(res, observability.messageVolume(tenant, w, interval, scope(q)));
    }

    /** The push spool of this process (maintenance mode buffers pushes to disk). */
    private void buffers(ServerRequest req, ServerResponse res) {
        boolean databaseAnswers = health.answers();
        ObjectNode body = Json.object()
                .put("pending", spool.pendingCount())
                .put("failed", spool.failedCount())
                .put("dbHealthy", spool.databaseHealthy() && databaseAnswers)
                // One process, one worker: the reference's fork-per-worker index is always 0.
                .put("worker", 0);
        Json.send(res, Status.OK_200, body);
    }

    /** Admin: runs the stats refresh now rather than at the next STATS_INTERVAL_MS. */
    private void refresh(ServerRequest req, ServerResponse res) throws SQLException {
        long started = System.nanoTime();
        JsonNode counts = parse(observability.refreshStats());
        ObjectNode body = Json.object().put("engine", "segments")
                .put("queuesUpdated", counts.path("queues").asLong(0))
                .put("segPartitions", counts.path("partitions").asLong(0));
        body.putObject("namespaces").put("namespacesUpdated", counts.path("namespaces").asLong(0));
        body.putObject("tasks").put("tasksUpdated", counts.path("tasks").asLong(0));
        body.put("refreshedAt", Wire.timestamp(Instant.now()));
        LOG.info(() -> "POST /api/v1/stats/refresh: " + counts.path("queues").asLong(0) + " queues, "
                + counts.path("partitions").asLong(0) + " partitions refreshed in "
                + (System.nanoTime() - started) / 1_000_000 + " ms");
        Json.send(res, Status.OK_200, body);
    }

    private static ObservabilityService.Scope scope(Params q) {
        return new ObservabilityService.Scope(q.name("queue", Names.QUEUE).orElse(null), q.name("namespace", Names.NAMESPACE).orElse(null),
                q.name("task", Names.TASK).orElse(null));
    }

    private static JsonNode parse(String json) {
        try {
            return json == null ? Json.object() : Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("stats refresh returned unreadable JSON", e);
        }
    }
}
