package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.AckService;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.Tenants;

import java.sql.SQLException;
import java.util.List;

/**
 * {@code POST /api/v1/ack} and {@code POST /api/v1/ack/batch} (broker/DESIGN.md, Acks, retries and
 * dead letters), answered with one result per item. Field names, defaults and status codes are the
 * reference broker's (broker/DESIGN.md, HTTP contract).
 */
public final class AckHttpService implements HttpService {
    private final AckService ack;
    private final BrokerMetrics metrics;
    private final Tenancy tenancy;

    public AckHttpService(AckService ack, BrokerMetrics metrics, Tenancy tenancy) {
        this.ack = ack;
        this.metrics = metrics;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/ack", this::ackSingle)
             .post("/ack/batch", this::ackBatch);
    }

    private void ackSingle(ServerRequest req, ServerResponse res) throws SQLException {
        JsonNode body = badBodyOnError(req);
        if (!body.isObject()) {
            throw new BadRequestException("bad body: an ack object is required");
        }
        String group = Names.check(Names.CONSUMER_GROUP, BodyItems.text(body, "consumerGroup", Tenants.QUEUE_MODE));
        sendAckResults(res, ack.ack(tenancy.of(req), group, List.of(BodyItems.ackItem(body, 0))));
    }

    private void ackBatch(ServerRequest req, ServerResponse res) throws SQLException {
        byte[] raw;
        try {
            raw = Json.rawBody(req);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
        AckBatchBody.Parsed body = AckBatchBody.parse(raw);
        List<AckService.Item> items = body.items();
        Names.check(Names.CONSUMER_GROUP, body.consumerGroup());
        sendAckResults(res, items.isEmpty() ? List.of() : ack.ack(tenancy.of(req), body.consumerGroup(), items));
    }

    private void sendAckResults(ServerResponse res, List<AckService.Result> results) {
        metrics.acked(results);
        Json.sendBytes(res, Status.OK_200, renderAckResults(results));
    }

    /** The per-item ack results, written straight to bytes: as a tree they were about 5% of the consume CPU. */
    static byte[] renderAckResults(List<AckService.Result> results) {
        JsonBytes out = new JsonBytes(64 + results.size() * 160);
        out.raw("[");
        for (int i = 0; i < results.size(); i++) {
            AckService.Result r = results.get(i);
            out.raw(i == 0 ? "{\"index\":" : ",{\"index\":").number(r.index())
                    .raw(",\"transactionId\":").string(r.transactionId())
                    .raw(r.success() ? ",\"success\":true" : ",\"success\":false")
                    .raw(",\"error\":").string(r.error())
                    .raw(r.leaseReleased() ? ",\"leaseReleased\":true" : ",\"leaseReleased\":false")
                    .raw(r.dlq() ? ",\"dlq\":true" : ",\"dlq\":false")
                    .raw(r.noop() ? ",\"noop\":true}" : ",\"noop\":false}");
        }
        return out.raw("]").toByteArray();
    }

    private static JsonNode badBodyOnError(ServerRequest req) {
        try {
            return Json.body(req);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
    }
}
