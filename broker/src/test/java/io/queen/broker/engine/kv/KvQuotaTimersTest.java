package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.KvSettings;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The timers' rungs of the quota view: the grant, the occupancy with its release band, and the horizon. */
class KvQuotaTimersTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final UUID T = UUID.fromString("0000000a-0000-4000-8000-000000000001");

    private static KvSettings.Guard guard(boolean requireGrant) {
        return new KvSettings.Guard(requireGrant, 200, 400, 100, 200, 0, 10_000, 300_000, 30_000, 90, 80, 1_000, 1_000);
    }

    private static JsonNode poll(String row) throws Exception {
        return MAPPER.readTree("[{\"tenant\":\"" + T + "\",\"granted\":true,\"enabled\":true," + row + "}]");
    }

    @Test
    void withoutAGrantRequiredAnUnknownTenantSchedulesFreely() {
        KvQuota quota = new KvQuota(guard(false));
        assertNull(quota.checkTimers(T, 256));
        assertEquals(7_776_000L, quota.horizonSeconds(T, 7_776_000L));
    }

    @Test
    void withAGrantRequiredNoRowOrADisabledRowIsFeatureGated() throws Exception {
        KvQuota quota = new KvQuota(guard(true));
        assertEquals(KvQuota.Refusal.FEATURE_GATED, quota.checkTimers(T, 1));
        quota.adopt(MAPPER.readTree("[{\"tenant\":\"" + T + "\",\"granted\":true,\"enabled\":false}]"), 1);
        assertEquals(KvQuota.Refusal.FEATURE_GATED, quota.checkTimers(T, 1));
    }

    @Test
    void schedulesCountUntilTheLimitThenTheTenantIsFullUntilUnderTheReleaseBand() throws Exception {
        KvQuota quota = new KvQuota(guard(true));
        quota.adopt(poll("\"maxTimers\":10,\"timerRows\":7,\"computedAtMs\":1"), 1);
        assertNull(quota.checkTimers(T, 3), "exactly up to the limit fits");
        assertEquals(KvQuota.Refusal.QUOTA_EXCEEDED, quota.checkTimers(T, 4), "a call that does not fit whole");
        quota.scheduled(T, 3);
        assertEquals(KvQuota.Refusal.QUOTA_EXCEEDED, quota.checkTimers(T, 1), "this broker's schedules count at once");

        quota.adopt(poll("\"maxTimers\":10,\"timerRows\":9,\"computedAtMs\":2"), 2);
        assertEquals(KvQuota.Refusal.QUOTA_EXCEEDED, quota.checkTimers(T, 1), "9 of 10 is not under the 90% band");
        quota.adopt(poll("\"maxTimers\":10,\"timerRows\":8,\"computedAtMs\":3"), 3);
        assertNull(quota.checkTimers(T, 1), "released under the band; the new measurement reset the local count");
    }

    @Test
    void theTenantsHorizonNarrowsTheCellsAndNeverWidensIt() throws Exception {
        KvQuota quota = new KvQuota(guard(false));
        quota.adopt(poll("\"maxHorizonS\":60,\"computedAtMs\":1"), 1);
        assertEquals(60, quota.horizonSeconds(T, 7_776_000L));
        quota.adopt(poll("\"maxHorizonS\":99999999,\"computedAtMs\":2"), 2);
        assertEquals(7_776_000L, quota.horizonSeconds(T, 7_776_000L));
    }
}
