package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HttpException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.timers.TimerException;
import io.queen.broker.engine.timers.TimerService;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The timer routes (broker/DESIGN.md, Timers), shaped as the reference broker's handlers answer them:
 *
 * <ul>
 *   <li>{@code POST /timers}: {@code {"operations": [...]}} (or a bare array) of schedule, reschedule and
 *   cancel, answered {@code {"results": [...]}} index-aligned, each {@code {ok, status, queue, timerKey,
 *   txn, messageId?, deliverAt?}};</li>
 *   <li>{@code DELETE /timers/:queue/*timerKey?txn=}: one cancel, its own route so that nothing that
 *   stops new timers (the schedule switch) can stop a cancel;</li>
 *   <li>{@code GET /timers/:queue/*timerKey}: one pending timer with its payload, or 200
 *   {@code {"found": false}};</li>
 *   <li>{@code GET /timers/:queue?after&limit}: a keyset page {@code {rows, truncated, nextAfter}}
 *   without payloads; {@code ?mode=count&prefix=} counts the keys starting with a prefix.</li>
 * </ul>
 *
 * <p>The status is the call's outcome: {@code absent} and {@code too_late} are verdicts, 200 with
 * {@code ok: false}. The timer key is the rest of the raw path, slashes included, percent-decoded once.
 */
public final class TimerHttpService implements HttpService {
    private static final String PATH_PREFIX = "/api/v1/timers/";
    private static final String BAD_BATCH = "the body must be an array of operations, or {\"operations\":[...]}";

    private final TimerService timers;
    private final Tenancy tenancy;

    public TimerHttpService(TimerService timers, Tenancy tenancy) {
        this.timers = timers;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/timers", (req, res) -> guarded(req, res, this::batch))
             .get("/timers/{queue}", (req, res) -> guarded(req, res, this::list))
             .get("/timers/{queue}/{+key}", (req, res) -> guarded(req, res, this::get))
             .delete("/timers/{queue}/{+key}", (req, res) -> guarded(req, res, this::cancel));
    }

    private interface Handler {
        void handle(ServerRequest req, ServerResponse res) throws Exception;
    }

    private static void guarded(ServerRequest req, ServerResponse res, Handler handler) {
        try {
            handler.handle(req, res);
        } catch (TimerException e) {
            TimerErrors.send(res, e);
        } catch (BadRequestException | NotFoundException | HttpException | RequestException e) {
            throw e;
        } catch (Exception e) {
            TimerErrors.failure(req, res, e);
        }
    }

    private void batch(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        JsonNode root = body(req);
        JsonNode array = root.isArray() ? root : root.isObject() ? root.get("operations") : null;
        if (array == null || !array.isArray()) {
            throw TimerException.badRequest("timers_bad_body", BAD_BATCH);
        }
        List<JsonNode> ops = new ArrayList<>(array.size());
        array.forEach(ops::add);
        ObjectNode out = TimerService.MAPPER.createObjectNode();
        ArrayNode results = out.putArray("results");
        timers.apply(tenant, ops).forEach(results::add);
        send(res, out);
    }

    private void cancel(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        String[] queueKey = queueAndKey(req);
        String txn = req.query().first("txn").orElse(null);
        send(res, timers.cancel(tenant, queueKey[0], queueKey[1], txn));
    }

    private void get(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        String[] queueKey = queueAndKey(req);
        send(res, timers.get(tenant, queueKey[0], queueKey[1]));
    }

    private void list(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        String queue = queueOnly(req);
        String mode = req.query().first("mode").orElse("list");
        if (mode.isEmpty() || mode.equals("list")) {
            String after = req.query().first("after").filter(a -> !a.isEmpty()).orElse(null);
            // Lenient, as the reference's query helpers are: a limit that is not a number is the default.
            Integer limit = req.query().first("limit").map(TimerHttpService::intOrNull).orElse(null);
            send(res, timers.list(tenant, queue, after, limit));
        } else if (mode.equals("count")) {
            if (req.query().contains("after") || req.query().contains("limit")) {
                throw TimerException.badRequest("timers_count_page_parameters", "mode=count does not accept after or limit");
            }
            send(res, timers.count(tenant, queue, req.query().first("prefix").orElse(null)));
        } else {
            throw TimerException.badRequest("timers_read_mode_unknown",
                    "unknown timer read mode `" + mode + "`; expected list or count");
        }
    }

    private static Integer intOrNull(String v) {
        try {
            return Integer.valueOf(v.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The queue and timer key from the raw path, each percent-decoded once (the key keeps its slashes). */
    static String[] queueAndKey(ServerRequest req) {
        String raw = req.prologue().uriPath().rawPath();
        if (raw.startsWith(PATH_PREFIX)) {
            String rest = raw.substring(PATH_PREFIX.length());
            int slash = rest.indexOf('/');
            if (slash <= 0 || slash == rest.length() - 1) {
                throw new NotFoundException("Not Found");
            }
            return new String[] {KvHttpService.decodeOnce(rest.substring(0, slash)),
                    KvHttpService.decodeOnce(rest.substring(slash + 1))};
        }
        return new String[] {req.path().pathParameters().get("queue"), req.path().pathParameters().get("key")};
    }

    private static String queueOnly(ServerRequest req) {
        String raw = req.prologue().uriPath().rawPath();
        if (raw.startsWith(PATH_PREFIX)) {
            return KvHttpService.decodeOnce(raw.substring(PATH_PREFIX.length()));
        }
        return req.path().pathParameters().get("queue");
    }

    private static JsonNode body(ServerRequest req) {
        byte[] bytes = Json.rawBody(req);
        if (new String(bytes, StandardCharsets.UTF_8).isBlank()) {
            throw TimerException.badRequest("timers_bad_body", "the request body is empty; JSON is required");
        }
        JsonNode tree;
        try {
            tree = TimerService.MAPPER.readTree(bytes);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw TimerException.badRequest("timers_bad_body", "invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw TimerException.badRequest("timers_bad_body", "the request body could not be read as JSON");
        }
        try {
            Json.requireStorable(tree);
        } catch (BadRequestException e) {
            throw TimerException.badRequest("timers_bad_body", e.getMessage());
        }
        return tree;
    }

    private static void send(ServerResponse res, JsonNode body) {
        Json.sendBytes(res, Status.OK_200, body.toString().getBytes(StandardCharsets.UTF_8));
    }
}
