package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.MaintenanceSwitches;
import io.queen.broker.engine.PushSpool;
import io.queen.broker.engine.TenantPurge;

import java.io.IOException;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Cell-wide system routes under {@code /api/v1/system} (broker/DESIGN.md, Push spool, KV store and
 * Tenancy): the push and pop maintenance switches, the KV and timer kill switches, the shared-state
 * summary, and the bounded tenant purge the Kubernetes operator's Tenant finalizer calls until it
 * reports done. None of them is scoped by x-queen-tenant.
 */
public final class SystemHttpService implements HttpService {
    private static final double MIB = 1024.0 * 1024.0;

    private final MaintenanceSwitches switches;
    private final PushSpool spool;
    private final TenantPurge purge;

    public SystemHttpService(MaintenanceSwitches switches, PushSpool spool, TenantPurge purge) {
        this.switches = switches;
        this.spool = spool;
        this.purge = purge;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/system/maintenance", this::maintenance)
             .post("/system/maintenance", this::setMaintenance)
             .get("/system/maintenance/pop", this::popMaintenance)
             .post("/system/maintenance/pop", this::setPopMaintenance)
             .get("/system/shared-state", this::sharedState)
             .get("/system/kv-timers", this::kvTimers)
             .post("/system/kv-timers", this::setKvTimers)
             .post("/system/tenants/{tenantId}/purge", this::purgeTenant);
    }

    // ---------------------------------------------------------------- maintenance

    private void maintenance(ServerRequest req, ServerResponse res) {
        // Fresh from queen.system_state so a flip made on another broker shows at once; never fails.
        switches.refresh();
        PushSpool.FileStats files = spool.fileStats();
        ObjectNode body = Json.object()
                .put("maintenanceMode", switches.pushPaused())
                .put("popMaintenanceMode", switches.popPaused())
                .put("bufferedMessages", spool.pendingCount())
                .put("bufferHealthy", spool.healthy());
        ObjectNode stats = body.putObject("bufferStats")
                .put("pendingCount", spool.pendingCount())
                .put("failedCount", spool.failedCount())
                .put("dbHealthy", spool.databaseHealthy());
        // The reference names the sealed spool files awaiting the drain "failedFiles" (all of them failover).
        stats.putObject("failedFiles")
                .put("count", files.count())
                .put("totalBytes", files.totalBytes())
                .put("totalMB", files.totalBytes() / MIB)
                .put("failoverCount", files.count())
                .put("qos0Count", 0);
        Json.send(res, Status.OK_200, body);
    }

    private void setMaintenance(ServerRequest req, ServerResponse res) {
        boolean enabled = enabledFlag(req);
        boolean stored = switches.setPush(enabled);
        // In force on this broker even while the database is down (so that pushes spool); "stored"
        // says whether the other brokers see it yet (they will once it is written).
        Json.send(res, Status.OK_200, Json.object()
                .put("maintenanceMode", enabled)
                .put("stored", stored)
                .put("bufferedMessages", spool.pendingCount())
                .put("bufferHealthy", spool.healthy())
                .put("message", enabled
                        ? "Maintenance mode ENABLED. All PUSHes routing to file buffer."
                        : "Maintenance mode DISABLED. Background processor will drain buffer to DB."));
    }

    private void popMaintenance(ServerRequest req, ServerResponse res) {
        boolean on = switches.popPaused();
        Json.send(res, Status.OK_200, Json.object()
                .put("popMaintenanceMode", on)
                .put("message", on
                        ? "Pop maintenance mode is ON. All POP operations return empty arrays."
                        : "Pop maintenance mode is OFF. Normal operation."));
    }

    private void setPopMaintenance(ServerRequest req, ServerResponse res) {
        boolean enabled = enabledFlag(req);
        boolean stored = switches.setPop(enabled);
        Json.send(res, Status.OK_200, Json.object()
                .put("popMaintenanceMode", enabled)
                .put("stored", stored)
                .put("message", enabled
                        ? "Pop maintenance mode ENABLED. All POP operations will return empty arrays."
                        : "Pop maintenance mode DISABLED. Normal operation resumed."));
    }

    /**
     * The reference's cache-sync statistics. Its 1.x broker has no gossip cache and answers a fixed
     * single-node summary with the live switches, field names in snake_case, as the reference broker
     * answers; so do we, from this broker's in-process switches (no database read).
     */
    private void sharedState(ServerRequest req, ServerResponse res) {
        Json.send(res, Status.OK_200, Json.object()
                .put("enabled", false)
                .put("reason", "single_node_segments_broker")
                .put("maintenance_mode", switches.pushPaused())
                .put("pop_maintenance_mode", switches.popPaused()));
    }

    // ---------------------------------------------------------------- kv and timer kill switches

    /**
     * The three kill switches, fresh from queen.system_state (never failing: the in-process values
     * answer when the database does not). The reference's quota fields describe a quota gate this
     * broker does not have yet: 0 tenants, no measurement (null age), 0 hot, until quotas exist.
     */
    private void kvTimers(ServerRequest req, ServerResponse res) {
        switches.refresh();
        Json.send(res, Status.OK_200, kvTimersState()
                .put("quotaTenants", 0)
                .putNull("quotaAgeMs")
                .put("quotaHot", 0));
    }

    /**
     * {@code {kv?, timersSchedule?, timersFire?}}: each given switch is flipped, the others are left
     * as they are (a body that reset the unnamed ones would stop the timer fire along with new
     * timers). A null is the same as leaving the field out, as the reference reads it.
     */
    private void setKvTimers(ServerRequest req, ServerResponse res) {
        JsonNode body;
        try {
            body = Json.body(req);
        } catch (BadRequestException e) {
            throw new BadRequestException("bad body: " + e.getMessage());
        }
        if (!body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        Boolean kv = switchField(body, "kv");
        Boolean schedule = switchField(body, "timersSchedule");
        Boolean fire = switchField(body, "timersFire");
        if (kv == null && schedule == null && fire == null) {
            // The reference broker's sentence, word for word (its handler's source settles it).
            throw new BadRequestException("at least one of kv, timersSchedule, timersFire (boolean) is required");
        }
        boolean stored = switches.setKvTimers(kv, schedule, fire);
        // "mirrored" is the reference's word for what the maintenance routes here call "stored": in
        // force on this broker either way, seen by the others once written.
        Json.send(res, Status.OK_200, kvTimersState()
                .put("mirrored", stored)
                .put("stored", stored)
                .put("message", switches.timersFireEnabled()
                        ? "kv/timers runtime switches updated"
                        : "TIMER FIRE IS PAUSED. Nothing is lost (deliverAt is a floor and the backlog drains oldest"
                                + " first once it is back on), but promised messages are NOT being delivered."));
    }

    private ObjectNode kvTimersState() {
        return Json.object()
                .put("kvEnabled", switches.kvEnabled())
                .put("timersScheduleEnabled", switches.timersScheduleEnabled())
                .put("timersFireEnabled", switches.timersFireEnabled());
    }

    private static Boolean switchField(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isBoolean()) {
            throw new BadRequestException("bad body: " + field + " must be a boolean");
        }
        return v.booleanValue();
    }

    private static boolean enabledFlag(ServerRequest req) {
        JsonNode body;
        try {
            body = Json.body(req);
        } catch (BadRequestException e) {
            throw new BadRequestException("bad body: " + e.getMessage());
        }
        JsonNode enabled = body.get("enabled");
        if (enabled == null || !enabled.isBoolean()) {
            throw new BadRequestException("enabled (boolean) is required");
        }
        return enabled.booleanValue();
    }

    // ---------------------------------------------------------------- tenant purge

    private void purgeTenant(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = Names.uuid("tenantId", req.path().pathParameters().get("tenantId"));
        JsonNode body = Json.optionalObject(req);
        int maxQueues = budget(body, "maxQueues", TenantPurge.DEFAULT_MAX_QUEUES);
        int maxRows = budget(body, "maxRows", TenantPurge.DEFAULT_MAX_ROWS);
        String report;
        try {
            report = purge.step(tenant, maxQueues, maxRows);
        } catch (TenantPurge.DefaultTenantRefusedException e) {
            throw new BadRequestException(e.getMessage());
        }
        try {
            Json.send(res, Status.OK_200, Json.MAPPER.readTree(report));
        } catch (IOException e) {
            throw new IllegalStateException("delete_tenant_data_v1 returned no JSON: " + report, e);
        }
    }


    private static int budget(JsonNode body, String field, int fallback) {
        JsonNode v = body == null ? null : body.get(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 1) {
            throw new BadRequestException(field + " must be an integer of at least 1");
        }
        return v.intValue();
    }
}
