package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.QueueAdminService;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Queues under {@code /api/v1} (broker/DESIGN.md, Management plane): configure, the resources listings, delete and
 * partition discovery. Every call is scoped to the request's tenant, the overview too (the reference
 * answers the default tenant's cell-wide; with tenants that counts theirs, so ours does only without them).
 */
public final class QueueHttpService implements HttpService {
    /** Entries per discovery call: rejected above, never truncated, so no queue is silently skipped. */
    static final int MAX_CHANGED_ENTRIES = 64;
    static final int MAX_CHANGED_LIMIT = 1000;

    private final QueueAdminService queues;
    private final Tenancy tenancy;

    public QueueHttpService(QueueAdminService queues, Tenancy tenancy) {
        this.queues = queues;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/configure", this::configure)
             .get("/resources/queues", this::list)
             .get("/resources/overview", this::overview)
             .get("/resources/namespaces", this::namespaces)
             .get("/resources/tasks", this::tasks)
             .get("/resources/queues/{queue}/depth", this::depth)
             .get("/resources/queues/{queue}", this::detail)
             .delete("/resources/queues/{queue}", this::delete)
             .post("/partitions/changed", this::partitionsChanged);
    }

    // ---------------------------------------------------------------- configure

    private void configure(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        JsonNode body = badBodyOnError(req);
        JsonNode queue = body.get("queue");
        if (queue == null || !queue.isTextual()) {
            throw new BadRequestException("queue is required");   // "" is a legal queue name
        }
        // Decided before anything is written: a rejected mode must not configure in the other meaning.
        boolean replace = replaceMode(body.get("mode"));
        ObjectNode bag = optionsBag(body);
        for (Names.Rule label : List.of(Names.NAMESPACE, Names.TASK)) {
            if (bag.path(label.field()).isTextual()) {
                Names.check(label, bag.get(label.field()).asText());
            }
        }
        QueueAdminService.Configured r = queues.configure(tenant, Names.check(Names.QUEUE, queue.asText()), bag, replace);
        Json.send(res, r.refused() ? Status.BAD_REQUEST_400 : Status.OK_200, r.body());
    }

    /**
     * {@code mode} as the replace flag. Absent or null means merge, the newest behaviour of the reference
     * broker (1.6.0; up to 1.5 every call replaced), as our issue asks; clients wanting the old
     * meaning send {@code "replace"} (the operator always does). Anything but the two words is a 400.
     */
    static boolean replaceMode(JsonNode mode) {
        if (mode == null || mode.isNull()) {
            return false;
        }
        if (mode.isTextual() && mode.asText().equals("merge")) {
            return false;
        }
        if (mode.isTextual() && mode.asText().equals("replace")) {
            return true;
        }
        throw new BadRequestException("mode must be \"merge\" or \"replace\", got " + mode);
    }

    /**
     * The options: the {@code options} object when there is one, else the top level minus the routing
     * keys. A top-level non-empty namespace/task is folded in unless the bag already names it (a
     * {@code ""} or null in the bag is how a caller clears the label, and it wins).
     */
    static ObjectNode optionsBag(JsonNode body) {
        ObjectNode bag;
        if (body.path("options").isObject()) {
            bag = ((ObjectNode) body.get("options")).deepCopy();
        } else {
            bag = ((ObjectNode) body).deepCopy();
            bag.remove(List.of("queue", "options", "mode"));
        }
        for (String label : List.of("namespace", "task")) {
            JsonNode top = body.get(label);
            if (!bag.has(label) && top != null && top.isTextual() && !top.asText().isEmpty()) {
                bag.put(label, top.asText());
            }
        }
        bag.remove("replace");   // a directive only `mode` may give
        return bag;
    }

    // ---------------------------------------------------------------- listings

    private void list(ServerRequest req, ServerResponse res) throws SQLException {
        // stats=cached serves the reconciled stats rows as they are (the proxy's reconciler poll).
        boolean live = !"cached".equals(new Params(req.query()).string("stats").orElse("live"));
        Json.send(res, Status.OK_200, queues.list(tenancy.of(req), live));
    }

    private void detail(ServerRequest req, ServerResponse res) throws SQLException {
        String queue = Names.path(req, "queue", Names.QUEUE);
        Json.send(res, Status.OK_200, found(queues.detail(tenancy.of(req), queue)));
    }

    private void depth(ServerRequest req, ServerResponse res) throws SQLException {
        String queue = Names.path(req, "queue", Names.QUEUE);
        String group = new Params(req.query()).name("group", Names.CONSUMER_GROUP).orElse(null);
        Json.send(res, Status.OK_200, found(queues.depth(tenancy.of(req), queue, group)));
    }

    private void overview(ServerRequest req, ServerResponse res) throws SQLException {
        // Aggregates are scoped like the listings: cell-wide only where there are no other tenants.
        Json.send(res, Status.OK_200, queues.overview(tenancy.of(req), !tenancy.headerEnabled()));
    }

    private void namespaces(ServerRequest req, ServerResponse res) throws SQLException {
        Json.send(res, Status.OK_200, queues.namespaces(tenancy.of(req)));
    }

    private void tasks(ServerRequest req, ServerResponse res) throws SQLException {
        Json.send(res, Status.OK_200, queues.tasks(tenancy.of(req)));
    }

    private static JsonNode found(JsonNode body) {
        if (body == null) {
            throw new NotFoundException("Queue not found");
        }
        return body;
    }

    // ---------------------------------------------------------------- delete

    private void delete(ServerRequest req, ServerResponse res) throws SQLException {
        String queue = Names.path(req, "queue", Names.QUEUE);
        QueueAdminService.Deleted d = queues.delete(tenancy.of(req), queue);
        ObjectNode body = (ObjectNode) d.body();
        if (!d.existed()) {
            // Always 200 (SDKs delete before create), but the body must not claim a deletion.
            body.put("deleted", false).put("message", "Queue not found, nothing was deleted");
        }
        Json.send(res, Status.OK_200, body);
    }

    // ---------------------------------------------------------------- partition discovery

    private void partitionsChanged(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        List<QueueAdminService.ChangedEntry> entries = changedEntries(badBodyOnError(req));
        try {
            Json.send(res, Status.OK_200, queues.partitionsChanged(tenant, entries));
        } catch (QueueAdminService.InvalidSinceException e) {
            throw new BadRequestException("bad body: " + e.getMessage());
        }
    }

    /** Validates the batch; {@code since} is left for PostgreSQL to parse, as every wire timestamp is. */
    static List<QueueAdminService.ChangedEntry> changedEntries(JsonNode body) {
        if (!body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        JsonNode list = body.get("entries");
        if (list == null || list.isNull()) {
            return List.of();
        }
        if (!list.isArray()) {
            throw new BadRequestException("bad body: entries must be an array");
        }
        if (list.size() > MAX_CHANGED_ENTRIES) {
            throw new BadRequestException("bad body: " + list.size() + " entries exceeds the "
                    + MAX_CHANGED_ENTRIES + "-entry limit");
        }
        List<QueueAdminService.ChangedEntry> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode e = list.get(i);
            if (!e.isObject() || !e.path("queue").isTextual()) {
                throw new BadRequestException("bad body: entry " + i + " needs a queue (a string)");
            }
            String queue = Names.check(Names.QUEUE, e.get("queue").asText(), "entries[" + i + "].queue");
            if (queue.isEmpty()) {
                throw new BadRequestException("bad body: entry " + i + " has an empty queue name");
            }
            out.add(new QueueAdminService.ChangedEntry(queue, optionalText(e, "since", i), optionalText(e, "after", i),
                    limit(e, i)));
        }
        return out;
    }

    private static String optionalText(JsonNode entry, String field, int index) {
        JsonNode v = entry.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new BadRequestException("bad body: entry " + index + "." + field + " must be a string");
        }
        return v.asText();
    }

    /** Absent = the maximum; clamped to 1..1000, never rejected for size. */
    private static int limit(JsonNode entry, int index) {
        JsonNode v = entry.get("limit");
        if (v == null || v.isNull()) {
            return MAX_CHANGED_LIMIT;
        }
        if (!v.isIntegralNumber()) {
            throw new BadRequestException("bad body: entry " + index + ".limit must be an integer");
        }
        long requested = v.canConvertToLong() ? v.asLong()
                : v.bigIntegerValue().signum() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        return (int) Math.max(1, Math.min(MAX_CHANGED_LIMIT, requested));
    }

    // ---------------------------------------------------------------- helpers

    private static JsonNode badBodyOnError(ServerRequest req) {
        try {
            return Json.body(req);
        } catch (BadRequestException e) {
            throw new BadRequestException("bad body: " + e.getMessage());
        }
    }
}
