package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.PopService;
import io.queen.broker.engine.Tenants;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * The three pop routes under {@code /api/v1} (broker/DESIGN.md, Pop path): a queue, one partition
 * of it, and discovery by namespace and task, all answered in one shape. Field names, defaults and
 * status codes are the reference broker's (broker/DESIGN.md, HTTP contract).
 */
public final class PopHttpService implements HttpService {
    private final PopService pop;
    private final MaintenanceSwitches switches;
    private final BrokerMetrics metrics;
    private final PopDefaults defaults;
    private final Tenancy tenancy;

    /** Broker-wide pop defaults from the environment (DEFAULT_TIMEOUT, DEFAULT_SUBSCRIPTION_MODE). */
    public record PopDefaults(long timeoutMs, String subscriptionMode) {
    }

    public PopHttpService(PopService pop, MaintenanceSwitches switches, BrokerMetrics metrics, PopDefaults defaults,
                          Tenancy tenancy) {
        this.pop = pop;
        this.switches = switches;
        this.metrics = metrics;
        this.defaults = defaults;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/pop/queue/{queue}/partition/{partition}", this::popPartition)
             .get("/pop/queue/{queue}", this::popQueue)
             .get("/pop", this::popDiscover);
    }

    static final String CONFLATION_NEEDS_GROUP = "conflation requires consumerGroup: queue mode is a shared cursor"
            + " with no group identity to hang a delivery policy on";
    static final String CONFLATION_WITH_AUTO_ACK = "conflation cannot be combined with autoAck: auto-ack commits at"
            + " delivery with no lease, so a failed handler loses the tail and the at-least-once guarantee"
            + " conflation exists to provide degrades to at-most-once";

    /**
     * Pop maintenance: a bare 204 before anything touches the database, except that a pop asking
     * for conflation is answered 200 with the echo its client checks for, as the reference broker
     * answers it.
     */
    private boolean popPaused(ServerResponse res, PopService.Request r) {
        if (!switches.popPaused()) {
            return false;
        }
        if (Boolean.TRUE.equals(r.conflation())) {
            Json.sendBytes(res, Status.OK_200,
                    "{\"messages\":[],\"paused\":true,\"conflation\":true}".getBytes(StandardCharsets.UTF_8));
        } else {
            res.status(Status.NO_CONTENT_204).send();
        }
        return true;
    }

    private void popQueue(ServerRequest req, ServerResponse res) throws Exception {
        serve(res, popRequest(req, Names.path(req, "queue", Names.QUEUE), null));
    }

    private void popPartition(ServerRequest req, ServerResponse res) throws Exception {
        serve(res, popRequest(req, Names.path(req, "queue", Names.QUEUE),
                Names.path(req, "partition", Names.PARTITION)));
    }

    private void popDiscover(ServerRequest req, ServerResponse res) throws Exception {
        Params q = new Params(req.query());
        if (q.string("namespace").isEmpty() && q.string("task").isEmpty()) {
            popRefused(res, "namespace or task is required");
            return;
        }
        serve(res, popRequest(req, null, null));
    }

    private void serve(ServerResponse res, PopService.Request r) throws Exception {
        // The two combinations conflation refuses (broker/DESIGN.md, Pop path): both are consumer
        // bugs that no retry fixes.
        if (Boolean.TRUE.equals(r.conflation()) && Tenants.QUEUE_MODE.equals(r.consumerGroup())) {
            popRefused(res, CONFLATION_NEEDS_GROUP);
        } else if (Boolean.TRUE.equals(r.conflation()) && r.autoAck()) {
            popRefused(res, CONFLATION_WITH_AUTO_ACK);
        } else if (!popPaused(res, r)) {
            respond(res, pop.pop(r));
        }
    }

    private static void popRefused(ServerResponse res, String error) {
        ObjectNode body = Json.object().put("success", false).put("error", error);
        body.putArray("messages");
        Json.send(res, Status.BAD_REQUEST_400, body);
    }

    PopService.Request popRequest(ServerRequest req, String queue, String partition) {
        Params q = new Params(req.query());
        int batch = q.integer("batch", 200);
        if (batch < 0) {
            throw new BadRequestException("invalid query parameter batch=" + batch + ": must not be negative");
        }
        String group = q.name("consumerGroup", Names.CONSUMER_GROUP).orElse(Tenants.QUEUE_MODE);
        String mode = q.name("subscriptionMode", Names.SUBSCRIPTION_MODE).orElse(defaults.subscriptionMode());
        Instant from = null;
        String fromRaw = q.name("subscriptionFrom", Names.FILTER).orElse("");
        if (fromRaw.equals("now")) {
            mode = "new";
        } else if (!fromRaw.isEmpty()) {
            try {
                from = OffsetDateTime.parse(fromRaw).toInstant();
            } catch (DateTimeParseException e) {
                try {
                    from = Instant.parse(fromRaw);
                } catch (DateTimeParseException ignored) {
                    // The reference ignores an unparseable subscriptionFrom.
                }
            }
        }
        if (Tenants.QUEUE_MODE.equals(group)) {
            mode = "all";
        }
        int lease = Math.max(q.integer("leaseSeconds", 0), 0);
        Integer partitions = q.string("partitions").isPresent() ? q.integer("partitions", 1) : null;
        Boolean conflation = q.string("conflation").isPresent() ? q.bool("conflation", false) : null;
        return new PopService.Request(
                new PopService.Source(tenancy.of(req), queue, partition,
                        q.name("namespace", Names.NAMESPACE).orElse(null), q.name("task", Names.TASK).orElse(null)),
                new PopService.Sizing(batch, q.string("batch").isPresent(), partitions, q.bool("autopilot", false)),
                new PopService.Delivery(q.bool("autoAck", false), lease, q.bool("wait", false),
                        q.integer("timeout", (int) defaults.timeoutMs())),
                new PopService.Subscription(group, mode, from, conflation));
    }

    private void respond(ServerResponse res, PopService.Result r) {
        metrics.popped(r.isEmpty() ? 0 : r.messages().size());
        // An empty conflating (or conflicting) answer is a 200 carrying the echo: a client that asked
        // for conflation and finds no echo takes the broker for one that does not conflate.
        if (r.isEmpty() && !r.conflation() && !r.conflationConflict()) {
            res.status(Status.NO_CONTENT_204).send();
            return;
        }
        Json.sendBytes(res, Status.OK_200, render(r));
    }

    /**
     * The pop body with each payload spliced verbatim (no re-parse of message data). An empty
     * answer (conflating) names no partition and no lease, as none was claimed.
     */
    static byte[] render(PopService.Result r) {
        JsonBytes out = new JsonBytes(renderedSize(r));
        out.raw("{\"success\":true,\"queue\":").string(r.queue());
        if (r.isEmpty()) {
            out.raw(",\"partition\":\"\",\"partitionId\":\"\",\"leaseId\":\"\"");
        } else {
            out.raw(",\"partition\":").string(r.partition())
                    .raw(",\"partitionId\":").uuid(r.partitionId())
                    .raw(",\"leaseId\":").string(r.leaseId());
        }
        out.raw(",\"consumerGroup\":").string(r.consumerGroup()).raw(",\"messages\":[");
        // Messages of one segment share their creation time: format it once per run of equal instants.
        Instant lastCreated = null;
        String lastCreatedText = null;
        for (int i = 0; i < r.messages().size(); i++) {
            PopService.Message m = r.messages().get(i);
            if (lastCreated == null || !lastCreated.equals(m.createdAt())) {
                lastCreated = m.createdAt();
                lastCreatedText = Wire.timestamp(lastCreated);
            }
            out.raw(i == 0 ? "{\"id\":" : ",{\"id\":").uuid(m.id())
                    .raw(",\"transactionId\":").string(m.transactionId())
                    .raw(",\"traceId\":").uuid(m.traceId())
                    .raw(",\"data\":");
            if (m.data().length == 0) {
                out.raw("null");
            } else {
                out.raw(m.data()); // stored as the JSON the producer sent: its bytes as they are
            }
            out.raw(",\"producerSub\":").string(m.producerSub())
                    .raw(",\"createdAt\":").string(lastCreatedText)
                    .raw(",\"partitionId\":").uuid(m.partitionId())
                    .raw(",\"partition\":").string(m.partition())
                    .raw(",\"leaseId\":").string(r.leaseId())
                    .raw(",\"consumerGroup\":").string(r.consumerGroup())
                    .raw(",\"deliveryAttempt\":").number(m.deliveryAttempt())
                    .raw("}");
        }
        out.raw("],\"partitionsClaimed\":").number(r.partitionsClaimed());
        if (r.conflation()) {
            out.raw(",\"conflation\":true");
        }
        if (r.conflationConflict()) {
            out.raw(",\"conflationConflict\":true");
        }
        if (r.autopilot() != null) {
            out.raw(",\"autopilot\":{\"partitions\":").number(r.autopilot().partitions())
                    .raw(",\"batch\":").number(r.autopilot().batch()).raw("}");
        }
        return out.raw("}").toByteArray();
    }

    /**
     * About the size of the rendered body, so the buffer is not grown (and copied) on the way: a
     * popped batch is mostly its payloads, about 100 KB for 100 messages of 1 KB.
     */
    private static int renderedSize(PopService.Result r) {
        long size = 256;
        int perMessage = 420 + length(r.leaseId()) + length(r.consumerGroup());
        for (PopService.Message m : r.messages()) {
            size += perMessage + m.data().length + length(m.transactionId()) + length(m.partition())
                    + length(m.producerSub());
        }
        return (int) Math.min(size, Integer.MAX_VALUE - 8);
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }
}
