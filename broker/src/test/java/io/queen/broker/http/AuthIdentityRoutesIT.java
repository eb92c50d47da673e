package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
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
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code /auth/me}, {@code /auth/login} and {@code /auth/logout} as the reference answers them, auth off and on. */
class AuthIdentityRoutesIT {
    static DatabaseSettings db;
    static Broker open;
    static Broker secured;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("auth_identity");
        open = BrokerFixture.start(db, Map.of("QUEEN_SERVER_ID", "cell-a-0"));
        secured = BrokerFixture.start(db, Map.of("JWT_ENABLED", "true", "JWT_SECRET", Jwt.SECRET));
    }

    @AfterAll
    static void stop() {
        secured.close();
        open.close();
    }

    @Test
    void withAuthOffMeIsTheStandaloneOperator() {
        Reply r = new HttpProbe(open.port()).get("/auth/me");
        assertEquals(200, r.status(), r.body());
        JsonNode me = r.json();
        List<String> keys = new ArrayList<>();
        me.fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("user_id", "email", "tenant_slug", "is_operator", "operator_enabled", "operator_live",
                "acting_cluster", "clusters", "act_cluster_header", "role", "cluster", "standalone"), keys);
        assertEquals("standalone", me.get("user_id").asText());
        assertTrue(me.get("email").isNull());
        assertTrue(me.get("is_operator").asBoolean() && me.get("standalone").asBoolean());
        assertEquals("admin", me.get("role").asText());
        assertEquals("x-queen-act-cluster", me.get("act_cluster_header").asText());
        assertTrue(me.get("cluster").isNull());
        JsonNode cluster = me.get("clusters").get(0);
        assertEquals("00000000-0000-0000-0000-000000000001", cluster.get("tenant_id").asText());
        assertEquals("cell-a-0", cluster.get("cell_slug").asText(), "the cell is named by QUEEN_SERVER_ID");
        assertEquals("active", cluster.get("status").asText());
        assertEquals("local", me.get("acting_cluster").get("slug").asText());
    }

    @Test
    void withAuthOnMeIs401EvenWithAToken() {
        HttpProbe http = new HttpProbe(secured.port());
        for (Map<String, String> headers : List.of(Map.<String, String>of(),
                Map.of("Authorization", "Bearer " + Jwt.hs256("ops", "admin")))) {
            Reply r = http.call("GET", "/auth/me", null, headers);
            assertEquals(401, r.status(), r.body());
            assertEquals("auth_required", r.json().get("error").asText());
            assertEquals("auth_required", r.json().get("code").asText());
        }
    }

    @Test
    void loginRedirectsHomeWhenOffAndExplainsItselfWhenOn() {
        RawHttp.Answer off = new RawHttp(open.port()).send("GET", "/auth/login", Map.of(), null);
        assertEquals(303, off.status());
        assertEquals("/", off.headers().get("location"));
        RawHttp.Answer on = new RawHttp(secured.port()).send("GET", "/auth/login", Map.of(), null);
        assertEquals(200, on.status(), "public: it must render to a browser without a token");
        assertTrue(on.headers().get("content-type").startsWith("text/html"), on.headers().toString());
        assertTrue(on.body().contains("This broker requires authentication"), on.body());
    }

    @Test
    void logoutIsANoOpBothWays() {
        for (Broker b : List.of(open, secured)) {
            Reply r = new HttpProbe(b.port()).post("/auth/logout", "");
            assertEquals(200, r.status(), r.body());
            assertEquals("{\"ok\":true}", r.body());
        }
    }
}
