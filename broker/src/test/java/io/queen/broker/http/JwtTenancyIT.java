package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.Jwt;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which tenant a token acts for, by the reference's rule: a token carries no tenant; the tenant is
 * the {@code x-queen-tenant} header, read only when the broker trusts it (QUEEN_TENANCY_HEADER with
 * QUEEN_KV_TRUSTED_PROXY, set where a proxy owns the header), else the default tenant. So a token
 * cannot reach another tenant's queues on a broker that does not trust the header, and on one that
 * does, only through the header the proxy in front sets.
 */
class JwtTenancyIT {
    static final String TENANT = "33333333-0000-4000-8000-000000000001";
    static final String RW = Jwt.hs256("app-1", "read-write");
    static final String ADMIN = Jwt.hs256("ops-1", "admin");
    static DatabaseSettings db;
    static Broker untrusted;
    static Broker behindProxy;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("jwt_tenancy");
        untrusted = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET));
        behindProxy = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET,
                "QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true"));
        // The tenant's queue, pushed as the proxy would: the trusted broker, the tenant's header.
        Reply r = call(behindProxy, RW, TENANT, "POST", "/api/v1/push",
                "{\"items\":[{\"queue\":\"tenant-orders\",\"payload\":{\"secret\":true}}]}");
        assertEquals(201, r.status(), r.body());
    }

    @AfterAll
    static void stop() {
        behindProxy.close();
        untrusted.close();
    }

    @Test
    void onABrokerThatDoesNotTrustTheHeaderNoTokenReachesAnotherTenant() {
        for (String token : List.of(RW, ADMIN)) {
            assertFalse(queueIds(untrusted, token, TENANT).contains(theirs()),
                    "the header is ignored: the default tenant's listing");
            Reply pop = call(untrusted, token, TENANT, "GET", "/api/v1/pop/queue/tenant-orders?wait=false", null);
            assertEquals(204, pop.status(), "nothing of the tenant's is served: " + pop.body());
            // A pop names a queue of the caller's own tenant (it may leave an empty one there): never theirs.
            Reply detail = call(untrusted, token, TENANT, "GET", "/api/v1/resources/queues/tenant-orders", null);
            assertTrue(detail.status() == 404 || !detail.json().path("id").asText().equals(theirs()), detail.body());
        }
        // Even an admin delete on that broker names the default tenant's queue of that name, never theirs.
        call(untrusted, ADMIN, TENANT, "DELETE", "/api/v1/resources/queues/tenant-orders", null);
        assertTrue(queueIds(behindProxy, RW, TENANT).contains(theirs()), "still there for its tenant");
        Reply popped = call(behindProxy, RW, TENANT, "GET", "/api/v1/messages?queue=tenant-orders", null);
        assertEquals(1, popped.json().get("messages").size(), popped.body());
    }

    @Test
    void behindAProxyTheTokenSaysWhatItMayDoAndTheHeaderWhichTenant() {
        // Without the header: the default tenant, whatever the token.
        assertFalse(queueIds(behindProxy, ADMIN, null).contains(theirs()));
        // With it: that tenant, for any token whose role admits the route (the reference binds no tenant to a token).
        assertTrue(queueIds(behindProxy, RW, TENANT).contains(theirs()));
        Reply listed = call(behindProxy, Jwt.hs256("viewer", "read-only"), TENANT, "GET", "/api/v1/messages?queue=tenant-orders", null);
        assertEquals(200, listed.status(), listed.body());
        // The role still decides first: a producer cannot read the tenant's messages with any header.
        Reply producer = call(behindProxy, Jwt.hs256("p", "write-only"), TENANT, "GET", "/api/v1/resources/queues", null);
        assertEquals(403, producer.status(), producer.body());
        // A 401 comes before the header is even parsed (the reference's middleware order).
        Reply bad = call(behindProxy, null, "not-a-uuid", "GET", "/api/v1/resources/queues", null);
        assertEquals(401, bad.status(), bad.body());
    }

    /** The id of the tenant's own queue, as its tenant sees it. */
    static String theirs() {
        Reply r = call(behindProxy, RW, TENANT, "GET", "/api/v1/resources/queues/tenant-orders", null);
        assertEquals(200, r.status(), r.body());
        return r.json().get("id").asText();
    }

    static List<String> queueIds(Broker b, String token, String tenant) {
        Reply r = call(b, token, tenant, "GET", "/api/v1/resources/queues", null);
        assertEquals(200, r.status(), r.body());
        List<String> ids = new ArrayList<>();
        JsonNode list = r.json().has("queues") ? r.json().get("queues") : r.json();
        for (JsonNode q : list) {
            ids.add(q.path("id").asText());
        }
        assertFalse(ids.contains(""), "every listed queue has an id: " + r.body());
        return ids;
    }

    static Reply call(Broker b, String token, String tenant, String method, String path, String body) {
        Map<String, String> headers = new java.util.HashMap<>();
        if (token != null) {
            headers.put("Authorization", "Bearer " + token);
        }
        if (tenant != null) {
            headers.put("x-queen-tenant", tenant);
        }
        return new HttpProbe(b.port()).call(method, path, body, headers);
    }
}
