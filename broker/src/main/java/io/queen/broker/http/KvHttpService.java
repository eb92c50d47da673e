package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.HttpException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.kv.KvException;
import io.queen.broker.engine.kv.KvJson;
import io.queen.broker.engine.kv.KvResult;
import io.queen.broker.engine.kv.KvService;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The KV routes (broker/DESIGN.md, KV store), shaped as the reference broker's handlers answer them:
 *
 * <ul>
 *   <li>{@code POST /kv}: a batch, the body a bare array of operations or {@code {"operations":[...]}},
 *   answered {@code {"results":[...]}} index-aligned; the only route for getPrefix and incr;</li>
 *   <li>{@code GET|PUT|DELETE /kv/:ns/*key}: one get, put or delete, answered with the element. The
 *   key is the rest of the path, slashes included, percent-decoded once ({@code a%2Fb} is the key
 *   {@code a/b}). They refuse any query string (a prefix or a key in a URL lands in every access log
 *   on the way) and a body naming op, ns, namespace or key (the URL names them);</li>
 *   <li>{@code GET /resources/kv/namespaces} and {@code POST /resources/kv/list}: the console's
 *   reads, which refuse a query string too.</li>
 * </ul>
 *
 * <p>The status is the call's outcome, never the operation's verdict: a missing key, a lost
 * putIfAbsent or a delete of nothing is a 200 saying so. A lost {@code required} precondition is a
 * 200 {@code {"ok": false, "reason": "kv_precondition", ...}}: the call rolled back, as asked.
 */
public final class KvHttpService implements HttpService {
    private static final String PATH_PREFIX = "/api/v1/kv/";
    private static final String BAD_BATCH = "the body must be an array of operations, or {\"operations\":[...]}";

    private final KvService kv;
    private final Tenancy tenancy;

    public KvHttpService(KvService kv, Tenancy tenancy) {
        this.kv = kv;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        // No literal segment may ever sit under /kv/{ns}/: it would make every key of that name
        // unreachable. The console's routes live under /resources for that reason.
        rules.post("/kv", (req, res) -> guarded(req, res, this::batch))
             .get("/kv/{ns}/{+key}", (req, res) -> guarded(req, res, this::get))
             .put("/kv/{ns}/{+key}", (req, res) -> guarded(req, res, this::put))
             .delete("/kv/{ns}/{+key}", (req, res) -> guarded(req, res, this::delete))
             .get("/resources/kv/namespaces", (req, res) -> guarded(req, res, this::namespaces))
             .post("/resources/kv/list", (req, res) -> guarded(req, res, this::list));
    }

    private interface Handler {
        void handle(ServerRequest req, ServerResponse res) throws Exception;
    }

    /**
     * KV refusals leave in the KV envelope and database failures as kv_unavailable (KvErrors); the
     * tenant header's 400, broken framing and the body size limit keep the broker-wide answers.
     */
    private static void guarded(ServerRequest req, ServerResponse res, Handler handler) {
        try {
            handler.handle(req, res);
        } catch (KvException e) {
            KvErrors.send(res, e);
        } catch (BadRequestException | NotFoundException | HttpException | RequestException e) {
            throw e;
        } catch (Exception e) {
            KvErrors.failure(req, res, e);
        }
    }

    // ---------------------------------------------------------------- POST /kv

    private void batch(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        JsonNode root = body(req, false);
        JsonNode array = root.isArray() ? root : root.isObject() ? root.get("operations") : null;
        if (array == null || !array.isArray()) {
            throw KvException.badRequest("kv_bad_body", BAD_BATCH);
        }
        List<JsonNode> ops = new ArrayList<>(array.size());
        array.forEach(ops::add);
        KvService.Outcome outcome = kv.apply(tenant, ops);
        if (outcome instanceof KvService.Answered answered) {
            ObjectNode body = KvJson.MAPPER.createObjectNode();
            ArrayNode results = body.putArray("results");
            answered.results().forEach(r -> results.add(render(r)));
            send(res, body);
        } else {
            send(res, precondition((KvService.PreconditionLost) outcome));
        }
    }

    // ---------------------------------------------------------------- path routes

    private void get(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        refuseQueryString(req, "the KV path routes take no query parameters; prefix reads live only in the"
                + " POST /api/v1/kv body, since a URL is recorded by every access log on the way");
        String[] nsKey = nsAndKey(req);
        ObjectNode op = KvJson.MAPPER.createObjectNode().put("op", "get").put("ns", nsKey[0]).put("key", nsKey[1]);
        KvService.Outcome outcome = kv.apply(tenant, List.of(op));
        KvResult result = ((KvService.Answered) outcome).results().getFirst();
        if (result instanceof KvResult.Get g && g.found()) {
            // An ETag to spare a client the bytes of a value it has; a conditional write goes
            // through expect in the body, not If-Match.
            res.header(HeaderNames.ETAG, "\"" + g.version() + "\"");
        }
        send(res, render(result));
    }

    private void put(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        refuseQueryString(req, "the KV path routes take no query parameters");
        String[] nsKey = nsAndKey(req);
        JsonNode body = body(req, false);
        if (!body.isObject()) {
            throw KvException.badRequest("kv_bad_body", "the body must be a JSON object");
        }
        refuseFieldsInPath(body);
        ObjectNode op = KvJson.MAPPER.createObjectNode().put("op", "put").put("ns", nsKey[0]).put("key", nsKey[1]);
        // Only these are taken; no expiry is defaulted here: exactly one of ttlSeconds and forever is
        // required, and a put that silently kept the old expiry would make a marker immortal.
        copy(body, op, "value", "ttlSeconds", "forever", "expect", "required");
        single(res, kv.apply(tenant, List.of(op)));
    }

    private void delete(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        refuseQueryString(req, "the KV path routes take no query parameters");
        String[] nsKey = nsAndKey(req);
        // No body is the usual delete; {expect?, required?} fences it.
        JsonNode body = body(req, true);
        if (body != null && !body.isNull() && !body.isObject()) {
            throw KvException.badRequest("kv_bad_body", "the body must be empty or a JSON object");
        }
        ObjectNode op = KvJson.MAPPER.createObjectNode().put("op", "delete").put("ns", nsKey[0]).put("key", nsKey[1]);
        if (body != null && body.isObject()) {
            refuseFieldsInPath(body);
            copy(body, op, "expect", "required");
        }
        single(res, kv.apply(tenant, List.of(op)));
    }

    private static void single(ServerResponse res, KvService.Outcome outcome) {
        if (outcome instanceof KvService.Answered answered) {
            send(res, render(answered.results().getFirst()));
        } else {
            send(res, precondition((KvService.PreconditionLost) outcome));
        }
    }

    private static void refuseFieldsInPath(JsonNode body) {
        for (String field : List.of("op", "ns", "namespace", "key")) {
            if (body.has(field)) {
                throw KvException.badRequest("kv_field_in_path",
                        "`" + field + "` is taken from the URL on this route and must not be in the body");
            }
        }
    }

    private static void copy(JsonNode from, ObjectNode to, String... fields) {
        for (String f : fields) {
            if (from.has(f)) {
                to.set(f, from.get(f));
            }
        }
    }

    /**
     * The namespace and key from the raw path, each percent-decoded once: the key is everything after
     * the namespace's slash, so {@code a%2Fb} and {@code a/b} name the same key while {@code %252F}
     * stays a literal {@code %2F}. A path whose raw form has no key segment is no KV route.
     */
    static String[] nsAndKey(ServerRequest req) {
        // The request's own raw path: the routed path is already decoded (and relative to /api/v1).
        String raw = req.prologue().uriPath().rawPath();
        if (raw.startsWith(PATH_PREFIX)) {
            String rest = raw.substring(PATH_PREFIX.length());
            int slash = rest.indexOf('/');
            if (slash <= 0 || slash == rest.length() - 1) {
                throw new NotFoundException("Not Found");
            }
            return new String[] {decodeOnce(rest.substring(0, slash)), decodeOnce(rest.substring(slash + 1))};
        }
        // The prefix itself was escaped (%6Bv): Helidon's decoded parameters are what is left.
        return new String[] {req.path().pathParameters().get("ns"), req.path().pathParameters().get("key")};
    }

    /** Percent-decoding of a path segment: '+' is a plus; RequestTextFilter has already refused bad UTF-8. */
    static String decodeOnce(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%' && i + 2 < raw.length()
                    && Character.digit(raw.charAt(i + 1), 16) >= 0 && Character.digit(raw.charAt(i + 2), 16) >= 0) {
                out.write(Character.digit(raw.charAt(i + 1), 16) * 16 + Character.digit(raw.charAt(i + 2), 16));
                i += 2;
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- console reads

    private void namespaces(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        refuseQueryString(req, "the KV console routes take no query parameters");
        ObjectNode body = KvJson.MAPPER.createObjectNode();
        ArrayNode list = body.putArray("namespaces");
        for (KvService.Namespace n : kv.namespaces(tenant)) {
            list.addObject().put("namespace", n.namespace()).put("keys", n.keys());
        }
        send(res, body);
    }

    /**
     * One page: {@code {namespace, prefix?, after?, limit?, keysOnly?, includeExpired?}} in a POST body,
     * because the cursor is a key and a key in a URL is written to every access log on the way. The
     * field names, their defaults (includeExpired false) and the answer's shape are the reference
     * broker's (its route docs and its console's source settle them); its handler's answer to a
     * missing namespace was not found, so the procedure's refusal of one decides: kv_bad_namespace.
     */
    private void list(ServerRequest req, ServerResponse res) throws Exception {
        UUID tenant = tenancy.of(req);
        refuseQueryString(req, "the KV console routes take no query parameters; the page is asked in the body");
        JsonNode body = body(req, false);
        if (!body.isObject()) {
            throw KvException.badRequest("kv_bad_body", "the body must be a JSON object");
        }
        JsonNode ns = body.get("namespace");
        JsonNode limit = body.get("limit");
        if (limit != null && !limit.isNull() && !isInteger(limit)) {
            throw KvException.badRequest("kv_bad_request", "limit must be an integer");
        }
        KvService.Page page = kv.list(tenant, new KvService.ListRequest(
                ns != null && ns.isTextual() ? ns.textValue() : null,
                text(body, "prefix"), text(body, "after"),
                limit == null || limit.isNull() ? null
                        : limit.canConvertToLong() ? limit.longValue() : limit.decimalValue().signum() < 0 ? 1L : Long.MAX_VALUE,
                flag(body, "keysOnly"), flag(body, "includeExpired")));
        ObjectNode out = KvJson.MAPPER.createObjectNode();
        ArrayNode rows = out.putArray("rows");
        page.rows().forEach(r -> rows.add(render(r)));
        out.put("truncated", page.truncated());
        if (page.nextAfter() == null) {
            out.putNull("nextAfter");
        } else {
            out.put("nextAfter", page.nextAfter());
        }
        out.put("bytes", page.bytes());
        send(res, out);
    }

    private static boolean isInteger(JsonNode v) {
        return v.isIntegralNumber() || (v.isNumber() && (v.decimalValue().signum() == 0
                || v.decimalValue().stripTrailingZeros().scale() <= 0));
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw KvException.badRequest("kv_bad_body", field + " must be a string");
        }
        return v.textValue();
    }

    private static boolean flag(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return false;
        }
        if (!v.isBoolean()) {
            throw KvException.badRequest("kv_bad_body", field + " must be a boolean");
        }
        return v.booleanValue();
    }

    // ---------------------------------------------------------------- bodies and answers

    private static void refuseQueryString(ServerRequest req, String detail) {
        String query = req.query().rawValue();
        if (query != null && !query.isEmpty()) {
            throw KvException.badRequest("kv_no_query_string", detail);
        }
    }

    /**
     * The body as JSON read exactly (numbers as decimals), with every string storable text; empty is a
     * kv_bad_body unless {@code optional} (then null).
     */
    private static JsonNode body(ServerRequest req, boolean optional) {
        byte[] bytes = Json.rawBody(req);
        if (new String(bytes, StandardCharsets.UTF_8).isBlank()) {
            if (optional) {
                return null;
            }
            throw KvException.badRequest("kv_bad_body", "the request body is empty; JSON is required");
        }
        JsonNode tree;
        try {
            tree = KvJson.MAPPER.readTree(bytes);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw KvException.badRequest("kv_bad_body", "invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw KvException.badRequest("kv_bad_body", "the request body could not be read as JSON");
        }
        try {
            Json.requireStorable(tree);
        } catch (BadRequestException e) {
            throw KvException.badRequest("kv_bad_body", e.getMessage());
        }
        return tree;
    }

    private static void send(ServerResponse res, JsonNode body) {
        Json.sendBytes(res, Status.OK_200, KvJson.bytes(body));
    }

    /** The verdict of a call that rolled back on a required precondition; a 200, as the reference has it. */
    static ObjectNode precondition(KvService.PreconditionLost lost) {
        ObjectNode out = KvJson.MAPPER.createObjectNode().put("ok", false).put("reason", "kv_precondition");
        if (lost.failedIndex() != null || lost.kvReason() != null) {
            out.put("failedIndex", lost.failedIndex());
            out.put("kvReason", lost.kvReason());
            out.put("version", lost.version());
            out.set("value", lost.value());
        }
        return out;
    }

    static ObjectNode render(KvResult result) {
        ObjectNode out = KvJson.MAPPER.createObjectNode().put("index", result.index()).put("op", result.op());
        switch (result) {
            case KvResult.Get g -> {
                out.put("found", g.found()).put("key", g.key());
                if (g.found()) {
                    out.set("value", g.value());
                    out.put("version", g.version()).put("expiresAt", g.expiresAt()).put("updatedAt", g.updatedAt());
                }
            }
            case KvResult.GetMany m -> {
                ArrayNode rows = out.putArray("rows");
                m.rows().forEach(r -> rows.add(render(r)));
                ArrayNode missing = out.putArray("missing");
                m.missing().forEach(missing::add);
                out.put("truncated", m.truncated());
            }
            case KvResult.GetPrefix p -> {
                ArrayNode rows = out.putArray("rows");
                p.rows().forEach(r -> rows.add(render(r)));
                out.put("truncated", p.truncated()).put("nextAfter", p.nextAfter());
            }
            case KvResult.Write w -> {
                out.put("applied", w.applied());
                if (!w.applied()) {
                    out.put("reason", w.reason());
                }
                out.put("key", w.key());
                out.set("value", w.value());
                out.put("version", w.version());
            }
        }
        return out;
    }

    static ObjectNode render(KvResult.Row row) {
        ObjectNode out = KvJson.MAPPER.createObjectNode().put("key", row.key());
        if (row.value() != null) {
            out.set("value", row.value());
        }
        out.put("version", row.version()).put("expiresAt", row.expiresAt()).put("updatedAt", row.updatedAt());
        if (row.expired() != null) {
            out.put("expired", row.expired());
        }
        return out;
    }
}
