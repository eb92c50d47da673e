package io.queen.broker.http;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The refusal ladder on the timer routes and the timer rider, on a real PostgreSQL (broker/DESIGN.md,
 * KV sweeper and quotas): the schedule switch, the grant, the tenant's pending-timer limit, its own
 * horizon and the write rate it shares with the KV; a cancel passes every rung.
 */
class TimerGuardIT {
    private static final String A = "0000000a-0000-4000-8000-00000000000a";
    private static final String B = "0000000b-0000-4000-8000-00000000000b";

    private static String schedules(String queue, int n, long delayMs, String prefix) {
        StringBuilder ops = new StringBuilder("{\"operations\":[");
        for (int i = 0; i < n; i++) {
            ops.append(i == 0 ? "" : ",").append(TimerRoutesIT.schedule(queue, prefix + i, delayMs, prefix + "-tx" + i,
                    "{\"n\":" + i + "}"));
        }
        return ops.append("]}").toString();
    }

    private static void await(Callable<Boolean> condition, String what) {
        Awaitility.await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(condition);
    }

    @Test
    void theLadderRefusesSchedulesInOrderAndNeverACancel() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("timer_guard_ladder");
        try (Broker broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "QUEEN_SWEEPER", "false", "QUEEN_KV_QUOTA_REFRESH_MS", "1000", "QUEEN_KV_WRITE_RATE", "1",
                "QUEEN_KV_WRITE_BURST", "3"))) {
            HttpProbe http = new HttpProbe(broker.port());

            Reply gated = http.call(A, "POST", "/api/v1/timers", schedules("tg", 1, 600_000, "g"));
            assertEquals(403, gated.status(), gated.body());
            assertEquals("feature_gated", gated.json().get("error").asText(), "tenancy on: no quota row, no timers");
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"timersSchedule\":false}").status());
            assertEquals(503, http.call(A, "POST", "/api/v1/timers", schedules("tg", 1, 600_000, "g")).status(),
                    "the schedule switch is the outermost rung");
            assertEquals(200, http.post("/api/v1/system/kv-timers", "{\"timersSchedule\":true}").status());

            BrokerFixture.sql(db, "INSERT INTO queen.kv_quota (tenant_id, max_timers, max_timer_horizon_s) VALUES ('"
                    + A + "', 3, 60), ('" + B + "', NULL, NULL)");
            await(() -> http.call(A, "POST", "/api/v1/timers", schedules("tg", 1, 1_000, "a")).status() == 200,
                    "the grant to reach the broker's poll");

            Reply far = http.call(A, "POST", "/api/v1/timers", schedules("tg", 1, 61_000, "far"));
            assertEquals(403, far.status(), far.body());
            assertEquals("timer_horizon_exceeded", far.json().get("error").asText(), "the tenant's horizon is 60 s");
            Reply riderFar = http.call(A, "POST", "/api/v1/transaction", "{\"operations\":[],\"timers\":"
                    + schedules("tg", 1, 61_000, "rf").replace("{\"operations\":", "").replaceAll("}$", "") + "}");
            assertEquals(200, riderFar.status(), riderFar.body());
            assertEquals(false, riderFar.json().get("success").asBoolean(), riderFar.body());

            // One scheduled; the limit is 3: a call of 3 does not fit whole, a call of 2 does.
            Reply tooMany = http.call(A, "POST", "/api/v1/timers", schedules("tg", 3, 1_000, "b"));
            assertEquals(403, tooMany.status(), tooMany.body());
            assertEquals("timers_quota_exceeded", tooMany.json().get("error").asText());
            await(() -> http.call(A, "POST", "/api/v1/timers", schedules("tg", 2, 1_000, "c")).status() == 200,
                    "the write bucket to refill");
            Reply full = http.call(A, "POST", "/api/v1/timers", schedules("tg", 1, 1_000, "d"));
            assertEquals(403, full.status(), full.body());
            assertEquals("timers_quota_exceeded", full.json().get("error").asText(), "this broker's schedules count at once");
            Reply rider = http.call(A, "POST", "/api/v1/transaction", "{\"operations\":[],\"timers\":["
                    + TimerRoutesIT.schedule("tg", "r0", 1_000, "r-tx0", "{}") + "]}");
            assertEquals(403, rider.status(), rider.body());
            assertEquals("timers_quota_exceeded", rider.json().get("reason").asText(), rider.body());
            Reply cancel = http.call(A, "DELETE", "/api/v1/timers/tg/a0", (String) null);
            assertEquals(200, cancel.status(), "a cancel passes over quota: " + cancel.body());
            assertEquals("cancelled", cancel.json().get("status").asText(), cancel.body());

            // B is granted without limits; its write rate is 1/s with a burst of 3, shared with the KV.
            assertEquals(200, http.call(B, "POST", "/api/v1/kv",
                    "[{\"op\":\"put\",\"ns\":\"g\",\"key\":\"k\",\"value\":1,\"ttlSeconds\":60}]").status());
            int admitted = 0;
            Reply limited = null;
            for (int i = 0; i < 6 && limited == null; i++) {
                Reply r = http.call(B, "POST", "/api/v1/timers", schedules("tg", 1, 600_000, "e" + i));
                if (r.status() == 200) {
                    admitted++;
                } else {
                    limited = r;
                }
            }
            assertTrue(admitted >= 2 && admitted <= 3, "the burst less the KV put passes: " + admitted);
            assertEquals(429, limited.status(), limited.body());
            assertEquals("rate_limited", limited.json().get("error").asText(), limited.body());
            assertEquals(200, http.call(B, "DELETE", "/api/v1/timers/tg/e0", (String) null).status(),
                    "a cancel takes no token");
        }
    }
}
