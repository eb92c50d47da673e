package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.TraceService;
import io.queen.broker.engine.Tenants;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Message traces under {@code /api/v1} (broker/DESIGN.md, Management plane): record a trace event,
 * read a message's traces, read traces by name, list the names. The static {@code names} and
 * {@code by-name} routes are registered before the {@code {partitionId}/{transactionId}} pattern,
 * so they win.
 */
public final class TracesHttpService implements HttpService {
    private final TraceService traces;
    private final Tenancy tenancy;

    public TracesHttpService(TraceService traces, Tenancy tenancy) {
        this.traces = traces;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/traces", this::record)
             .get("/traces/names", this::listNames)
             .get("/traces/by-name/{traceName}", this::byName)
             .get("/traces/{partitionId}/{transactionId}", this::ofMessage);
    }

    private void record(ServerRequest req, ServerResponse res) throws SQLException {
        JsonNode body = Json.body(req);
        if (!body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        String txn = text(body, "transactionId");
        String pid = text(body, "partitionId");
        if (txn == null || txn.isEmpty() || pid == null || pid.isEmpty()) {
            throw new BadRequestException("transactionId and partitionId are required");
        }
        if (!body.has("data")) {
            throw new BadRequestException("data is required");
        }
        String group = text(body, "consumerGroup");
        String eventType = text(body, "eventType");
        // The columns' widths: refused here as a 400 rather than failing the insert.
        fits("transactionId", txn, 255);
        fits("consumerGroup", group, 255);
        fits("eventType", eventType, 100);
        TraceService.NewTrace trace = new TraceService.NewTrace(Names.uuid("partitionId", pid), txn,
                group == null ? Tenants.QUEUE_MODE : group, eventType == null ? "info" : eventType,
                new String(Json.bytes(body.get("data")), StandardCharsets.UTF_8), traceNames(body.get("traceNames")));
        UUID id = traces.record(tenancy.of(req), trace);
        if (id == null) {
            // An unknown partition and another tenant's answer alike: existence does not leak.
            Json.send(res, Status.NOT_FOUND_404, Json.object().put("success", false).put("error", "Message not found"));
            return;
        }
        Json.send(res, Status.CREATED_201, Json.object().put("success", true).put("traceId", id.toString()));
    }

    private void ofMessage(ServerRequest req, ServerResponse res) throws SQLException {
        var path = req.path().pathParameters();
        ObjectNode body = Json.object();
        ArrayNode out = body.putArray("traces");
        for (TraceService.Trace t : traces.ofMessage(tenancy.of(req), Names.uuid("partitionId", path.get("partitionId")),
                Names.path(req, "transactionId", Names.TRANSACTION_ID))) {
            ObjectNode o = out.addObject().put("id", t.id().toString()).put("event_type", t.eventType());
            o.set("data", data(t.dataJson()));
            o.put("consumer_group", t.consumerGroup()).put("worker_id", t.workerId())
                    .put("created_at", Wire.timestamp(t.createdAt()));
            putNames(o, t.names());
        }
        Json.send(res, Status.OK_200, body);
    }

    private void byName(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        int limit = q.integer("limit", 100);
        int offset = q.integer("offset", 0);
        Params.checkPage(limit, offset);
        TraceService.NamedPage page = traces.byName(tenancy.of(req), Names.path(req, "traceName", Names.TRACE_NAME),
                limit, offset);
        ObjectNode body = Json.object();
        ArrayNode out = body.putArray("traces");
        for (TraceService.NamedTrace t : page.traces()) {
            ObjectNode o = out.addObject().put("id", t.id().toString()).put("transaction_id", t.transactionId())
                    .put("partition_id", t.partitionId().toString()).put("event_type", t.eventType());
            o.set("data", data(t.dataJson()));
            o.put("consumer_group", t.consumerGroup()).put("worker_id", t.workerId())
                    .put("created_at", Wire.timestamp(t.createdAt())).put("queue_name", t.queue())
                    .put("partition_name", t.partition())
                    // Payloads live inside segment blobs; the reference never fills this either.
                    .putNull("message_payload");
            putNames(o, t.names());
        }
        body.put("total", page.total());
        body.putObject("pagination").put("limit", limit).put("offset", offset);
        Json.send(res, Status.OK_200, body);
    }

    private void listNames(ServerRequest req, ServerResponse res) throws SQLException {
        Params q = new Params(req.query());
        int limit = q.integer("limit", 50);
        int offset = q.integer("offset", 0);
        Params.checkPage(limit, offset);
        TraceService.NamesPage page = traces.names(tenancy.of(req), limit, offset);
        ObjectNode body = Json.object();
        ArrayNode out = body.putArray("trace_names");
        for (TraceService.TraceName n : page.names()) {
            out.addObject().put("trace_name", n.name()).put("trace_count", n.traceCount())
                    .put("message_count", n.messageCount()).put("last_seen", Wire.timestamp(n.lastSeen()));
        }
        body.put("total", page.total());
        body.putObject("pagination").put("limit", limit).put("offset", offset);
        Json.send(res, Status.OK_200, body);
    }

    /** A string field, null when absent or JSON null; any other type is a 400. */
    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new BadRequestException("bad body: " + field + " must be a string");
        }
        return v.asText();
    }

    private static void fits(String field, String value, int maxChars) {
        if (value != null && value.length() > maxChars) {
            throw new BadRequestException("bad body: " + field + " is longer than " + maxChars + " characters");
        }
    }

    /** traceNames: an array of strings or a single string. */
    private static List<String> traceNames(JsonNode value) {
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (value.isTextual()) {
            return List.of(Names.check(Names.TRACE_NAME, value.asText(), "traceNames[]"));
        }
        List<String> out = new ArrayList<>();
        if (value.isArray()) {
            for (JsonNode n : value) {
                if (!n.isTextual()) {
                    throw new BadRequestException("bad body: traceNames must be a string or an array of strings");
                }
                out.add(Names.check(Names.TRACE_NAME, n.asText(), "traceNames[]"));
            }
            return out;
        }
        throw new BadRequestException("bad body: traceNames must be a string or an array of strings");
    }

    private static void putNames(ObjectNode o, List<String> names) {
        ArrayNode a = o.putArray("trace_names");
        names.forEach(a::add);
    }

    /** Stored trace data (jsonb text) as JSON. */
    private static JsonNode data(String json) {
        return Json.storedOrNull(json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }
}
