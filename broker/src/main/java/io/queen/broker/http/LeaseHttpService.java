package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.AckService;

import java.sql.SQLException;

/**
 * {@code POST /api/v1/lease/:leaseId/extend} (broker/DESIGN.md, Pop path, leases): extends every
 * partition the lease holds. Field names and defaults are the reference broker's
 * (broker/DESIGN.md, HTTP contract).
 */
public final class LeaseHttpService implements HttpService {
    private final AckService ack;
    private final Tenancy tenancy;

    public LeaseHttpService(AckService ack, Tenancy tenancy) {
        this.ack = ack;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/lease/{leaseId}/extend", this::extendLease);
    }

    private void extendLease(ServerRequest req, ServerResponse res) throws SQLException {
        String leaseId = Names.path(req, "leaseId", Names.LEASE_ID);
        int seconds = 60;
        try {
            JsonNode body = Json.body(req);
            if (body.hasNonNull("seconds") && body.get("seconds").canConvertToInt()) {
                seconds = body.get("seconds").asInt();
            }
        } catch (BadRequestException e) {
            // Empty or non-JSON bodies mean the default, never a 400 (reference behaviour); a body
            // whose framing broke leaves the connection unusable, so that one is refused.
            if (e.closesConnection()) {
                throw e;
            }
        }
        AckService.Renewal r = ack.renew(tenancy.of(req), leaseId, seconds);
        ObjectNode out = Json.object().put("leaseId", leaseId).put("success", r.renewed() > 0).put("renewed", r.renewed());
        String at = Wire.timestamp(r.expiresAt());
        out.put("newExpiresAt", at).put("expiresAt", at).put("lease_expires_at", at);
        Json.send(res, Status.OK_200, out);
    }
}
