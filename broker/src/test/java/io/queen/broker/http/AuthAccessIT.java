package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.auth.AccessLevel;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.RawHttp;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.queen.broker.engine.auth.AccessLevel.ADMIN;
import static io.queen.broker.engine.auth.AccessLevel.PUBLIC;
import static io.queen.broker.engine.auth.AccessLevel.READ_ONLY;
import static io.queen.broker.engine.auth.AccessLevel.READ_WRITE;
import static io.queen.broker.engine.auth.AccessLevel.WRITE_ONLY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every route family against every caller, with JWT on and off. A caller the route's level admits
 * gets whatever the route answers (never a 401 or 403); anyone else gets 401 without a token and
 * 403 with a token whose roles fall short. With JWT off the same requests, without any token, are
 * all served. Then the spellings of an admin route that must not pass as a lesser one.
 */
class AuthAccessIT {
    static DatabaseSettings db;
    static Broker secured;
    static Broker open;
    static HttpProbe http;

    /** One request of a route family and the level the reference gives it. */
    record Route(String method, String path, String body, AccessLevel level) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    static final String PID = "00000000-0000-4000-8000-000000000000";

    static final List<Route> ROUTES = List.of(
            // public
            new Route("GET", "/health", null, PUBLIC),
            new Route("GET", "/metrics", null, PUBLIC),
            new Route("GET", "/metrics/prometheus", null, PUBLIC),
            new Route("POST", "/auth/logout", null, PUBLIC),
            new Route("GET", "/auth/login", null, PUBLIC),
            // read-only: status, analytics, resources, messages, groups, dlq, traces, fetch, discovery
            new Route("GET", "/status", null, READ_ONLY),
            new Route("GET", "/api/v1/status", null, READ_ONLY),
            new Route("GET", "/api/v1/status/queues", null, READ_ONLY),
            new Route("GET", "/api/v1/status/buffers", null, READ_ONLY),
            new Route("GET", "/api/v1/analytics/system-metrics", null, READ_ONLY),
            new Route("GET", "/api/v1/analytics/queue-lag", null, READ_ONLY),
            new Route("GET", "/api/v1/resources/queues", null, READ_ONLY),
            new Route("GET", "/api/v1/resources/overview", null, READ_ONLY),
            new Route("GET", "/api/v1/resources/queues/acl-q", null, READ_ONLY),
            new Route("GET", "/api/v1/resources/queues/acl-q/depth", null, READ_ONLY),
            new Route("GET", "/api/v1/messages", null, READ_ONLY),
            new Route("GET", "/api/v1/messages/" + PID + "/t1", null, READ_ONLY),
            new Route("GET", "/api/v1/consumer-groups", null, READ_ONLY),
            new Route("GET", "/api/v1/consumer-groups/lagging", null, READ_ONLY),
            new Route("GET", "/api/v1/consumer-groups/g1", null, READ_ONLY),
            new Route("GET", "/api/v1/dlq", null, READ_ONLY),
            new Route("GET", "/api/v1/traces/names", null, READ_ONLY),
            new Route("GET", "/api/v1/traces/" + PID + "/t1", null, READ_ONLY),
            new Route("POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":\"acl-q\",\"offset\":0}]}", READ_ONLY),
            new Route("POST", "/api/v1/partitions/changed", "{\"entries\":[{\"queue\":\"acl-q\"}]}", READ_ONLY),
            // write-only: produce
            new Route("POST", "/api/v1/push", "{\"items\":[{\"queue\":\"acl-q\",\"payload\":{\"n\":1}}]}", WRITE_ONLY),
            // read-write: consume, configure, seek, subscription, trace writes, message delete and replay
            new Route("GET", "/api/v1/pop/queue/acl-q?wait=false", null, READ_WRITE),
            new Route("GET", "/api/v1/pop?namespace=acl&wait=false", null, READ_WRITE),
            new Route("POST", "/api/v1/ack", "{\"transactionId\":\"t1\",\"partitionId\":\"" + PID + "\",\"status\":\"completed\"}", READ_WRITE),
            new Route("POST", "/api/v1/ack/batch", "{\"acknowledgments\":[]}", READ_WRITE),
            new Route("POST", "/api/v1/transaction", "{\"operations\":[]}", READ_WRITE),
            new Route("POST", "/api/v1/lease/" + PID + "/extend", "{\"seconds\":30}", READ_WRITE),
            new Route("POST", "/api/v1/configure", "{\"queue\":\"acl-q\",\"options\":{}}", READ_WRITE),
            new Route("POST", "/api/v1/consumer-groups/g1/queues/acl-q/seek", "{\"toEnd\":true}", READ_WRITE),
            new Route("POST", "/api/v1/consumer-groups/g1/subscription", "{\"subscriptionTimestamp\":\"2026-01-01T00:00:00Z\"}", READ_WRITE),
            new Route("POST", "/api/v1/traces", "{\"partitionId\":\"" + PID + "\",\"transactionId\":\"t1\",\"data\":{}}", READ_WRITE),
            new Route("DELETE", "/api/v1/messages/" + PID + "/t1", null, READ_WRITE),
            new Route("POST", "/api/v1/messages/" + PID + "/t1/retry", null, READ_WRITE),
            new Route("POST", "/api/v1/dlq/" + PID + "/replay", null, READ_WRITE),
            new Route("GET", "/api/v1/no-such-route", null, READ_WRITE),
            // admin: system, internal, deletes of queues, groups and the bulk DLQ, stats refresh
            new Route("GET", "/api/v1/system/maintenance", null, ADMIN),
            new Route("POST", "/api/v1/system/maintenance", "{\"enabled\":false}", ADMIN),
            new Route("POST", "/api/v1/system/maintenance/pop", "{\"enabled\":false}", ADMIN),
            new Route("GET", "/api/v1/system/shared-state", null, ADMIN),
            new Route("POST", "/api/v1/system/tenants/22222222-0000-4000-8000-000000000009/purge", null, ADMIN),
            new Route("POST", "/internal/api/notify", "{}", ADMIN),
            new Route("DELETE", "/api/v1/resources/queues/acl-gone", null, ADMIN),
            new Route("DELETE", "/api/v1/consumer-groups/g-gone", null, ADMIN),
            new Route("DELETE", "/api/v1/consumer-groups/g-gone/queues/acl-q", null, ADMIN),
            new Route("DELETE", "/api/v1/dlq?queue=acl-q", null, ADMIN),
            new Route("POST", "/api/v1/stats/refresh", null, ADMIN));

    /** The callers: none, a token without a known role, then one per role. */
    static final Map<String, String> CALLERS = new LinkedHashMap<>();

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("auth_access");
        secured = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET,
                "STATS_INTERVAL_MS", "3600000"));
        open = BrokerFixture.start(db, Map.of("STATS_INTERVAL_MS", "3600000"));
        http = new HttpProbe(secured.port());
        CALLERS.put("no token", null);
        CALLERS.put("guest", Jwt.hs256("guest-1", "guest"));
        CALLERS.put("write-only", Jwt.hs256("producer-1", "write-only"));
        CALLERS.put("read-only", Jwt.hs256("viewer-1", "read-only"));
        CALLERS.put("read-write", Jwt.hs256("app-1", "read-write"));
        CALLERS.put("admin", Jwt.hs256("ops-1", "admin"));
    }

    @AfterAll
    static void stop() {
        open.close();
        secured.close();
    }

    @Test
    void everyRouteFamilyAdmitsExactlyTheRolesOfItsLevel() {
        List<String> wrong = new ArrayList<>();
        for (Route r : ROUTES) {
            for (Map.Entry<String, String> c : CALLERS.entrySet()) {
                Reply reply = call(http, r, c.getValue());
                boolean admitted = admits(r.level(), c.getKey());
                if (admitted && (reply.status() == 401 || reply.status() == 403)) {
                    wrong.add(r + " as " + c.getKey() + ": refused " + reply.status() + " " + reply.body());
                } else if (!admitted && c.getValue() == null && !refusal(reply, 401, "Authentication required", "auth_required")) {
                    wrong.add(r + " without a token: " + reply.status() + " " + reply.body());
                } else if (!admitted && c.getValue() != null && !refusal(reply, 403, "Insufficient permissions", "forbidden")) {
                    wrong.add(r + " as " + c.getKey() + ": " + reply.status() + " " + reply.body());
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void withAuthOffEveryRouteIsServedWithoutAToken() {
        HttpProbe plain = new HttpProbe(open.port());
        List<String> refused = new ArrayList<>();
        for (Route r : ROUTES) {
            Reply reply = call(plain, r, null);
            if (reply.status() == 401 || reply.status() == 403) {
                refused.add(r + ": " + reply.status() + " " + reply.body());
            }
        }
        assertEquals(List.of(), refused);
        // A token sent to a broker without auth is ignored, not refused, even a broken one.
        Reply withJunk = plain.call("GET", "/api/v1/system/maintenance", null, Map.of("Authorization", "Bearer junk"));
        assertEquals(200, withJunk.status(), withJunk.body());
    }

    @Test
    void theTableIsTheOneTheFilterUses() {
        for (Route r : ROUTES) {
            String path = r.path().contains("?") ? r.path().substring(0, r.path().indexOf('?')) : r.path();
            assertEquals(r.level(), RouteAccess.of(r.method(), path), r.toString());
        }
    }

    @Test
    void noSpellingOfAnAdminRoutePassesAsALesserOne() {
        RawHttp raw = new RawHttp(secured.port());
        String rw = CALLERS.get("read-write");
        Map<String, String> auth = Map.of("Authorization", "Bearer " + rw);
        List<String> reached = new ArrayList<>();
        for (String target : List.of("/api/v1//system/maintenance", "//api/v1/system/maintenance",
                "/api/v1/./system/maintenance", "/api/v1/x/../system/maintenance", "/api/v1/system%2Fmaintenance",
                "/api/v1/%73ystem/maintenance", "/api/v1/system/maintenance/", "/api/v1/%2E/system/maintenance",
                "/api/v1/x/%2E%2E/system/maintenance", "/health/../api/v1/system/maintenance")) {
            RawHttp.Answer a = raw.send("GET", target, auth, null);
            if (a.status() == 200) {
                reached.add(target + " -> " + a.status() + " " + a.body());
            }
            assertTrue(a.status() == 400 || a.status() == 403 || a.status() == 404, target + " -> " + a.status() + " " + a.body());
        }
        for (String target : List.of("/api/v1/dlq/?queue=acl-q", "/api/v1//dlq?queue=acl-q",
                "/api/v1/resources/queues/x/..", "/api/v1/resources/queues/..", "/api/v1/resources/queues/%2E%2E")) {
            RawHttp.Answer a = raw.send("DELETE", target, auth, null);
            assertTrue(a.status() == 400 || a.status() == 403 || a.status() == 404, target + " -> " + a.status() + " " + a.body());
        }
        assertEquals(List.of(), reached);
    }

    @Test
    void theBearerPrefixIsAnyCaseAndABareTokenIsAccepted() {
        String admin = CALLERS.get("admin");
        for (String header : List.of("Bearer " + admin, "bearer " + admin, "BEARER " + admin, admin)) {
            Reply r = http.call("GET", "/api/v1/system/maintenance", null, Map.of("Authorization", header));
            assertEquals(200, r.status(), header.substring(0, 10) + ": " + r.body());
        }
        Reply bad = http.call("GET", "/api/v1/system/maintenance", null, Map.of("Authorization", "Basic dXNlcjpwdw=="));
        assertEquals(401, bad.status());
        assertEquals("Bad token header", bad.json().path("error").asText());
    }

    @Test
    void aSkippedPathNeedsNoTokenAndOnlyTheRootIsSkippedByASlash() {
        Broker b = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET,
                "JWT_SKIP_PATHS", "/health,/api/v1/status/,/"));
        try {
            HttpProbe p = new HttpProbe(b.port());
            assertEquals(200, p.get("/api/v1/status/buffers").status(), "a prefix entry ending in / skips below it");
            assertEquals(401, p.get("/api/v1/status").status(), "the prefix does not cover its parent");
            assertEquals(401, p.get("/api/v1/resources/queues").status(), "a lone / skips only the root");
            assertEquals(200, p.get("/metrics").status(), "/metrics is public by the table, whatever the skip list");
        } finally {
            b.close();
        }
    }

    // ---------------------------------------------------------------- helpers

    static boolean admits(AccessLevel level, String caller) {
        return switch (level) {
            case PUBLIC -> true;
            case READ_ONLY -> List.of("read-only", "read-write", "admin").contains(caller);
            case WRITE_ONLY -> List.of("write-only", "read-write", "admin").contains(caller);
            case READ_WRITE -> List.of("read-write", "admin").contains(caller);
            case ADMIN -> caller.equals("admin");
        };
    }

    static Reply call(HttpProbe probe, Route r, String token) {
        Map<String, String> headers = token == null ? Map.of() : Map.of("Authorization", "Bearer " + token);
        return probe.call(r.method(), r.path(), r.body(), headers);
    }

    static boolean refusal(Reply reply, int status, String error, String code) {
        if (reply.status() != status) {
            return false;
        }
        JsonNode body = reply.json();
        return error.equals(body.path("error").asText()) && code.equals(body.path("code").asText());
    }
}
