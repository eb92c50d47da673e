package io.queen.broker.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.BrokerMetrics;
import io.queen.broker.engine.PushIntake;
import io.queen.broker.engine.PushService;

import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /api/v1/push} (broker/DESIGN.md, Push path): the body is read by {@link PushBody},
 * stored by {@link PushIntake} (the database, or the spool). Field names, defaults and status
 * codes are the reference broker's (broker/DESIGN.md, HTTP contract).
 */
public final class PushHttpService implements HttpService {
    /** What a push refused during an outage is told to wait: about the spool drain's longest backoff. */
    static final String RETRY_AFTER_SECONDS = "5";

    private final PushIntake intake;
    private final BrokerMetrics metrics;
    private final Tenancy tenancy;

    public PushHttpService(PushIntake intake, BrokerMetrics metrics, Tenancy tenancy) {
        this.intake = intake;
        this.metrics = metrics;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/push", this::push);
    }

    private void push(ServerRequest req, ServerResponse res) throws SQLException {
        UUID tenant = tenancy.of(req);
        // The producer is who the verified token says, never what the body claims (broker/DESIGN.md, Authentication).
        List<PushService.Item> parsed = PushBody.parse(Json.rawBody(req), AuthFilter.subject(req));
        // PostgreSQL, or the on-disk spool under push maintenance or during a database outage.
        PushIntake.Outcome outcome = intake.push(tenant, parsed);
        if (outcome.route() == PushIntake.Route.OUTAGE_SPOOL && !outcome.stored()) {
            // Neither the database nor the spool took the items: nothing was stored, the client must retry.
            res.header(HeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
            ErrorMapping.send(res, Status.SERVICE_UNAVAILABLE_503, "spool_unavailable",
                    "database unavailable and the push spool cannot be written", null);
            return;
        }
        metrics.pushed(outcome.results().size());
        Json.sendBytes(res, outcome.stored() ? Status.CREATED_201 : Status.INTERNAL_SERVER_ERROR_500,
                renderPushResults(outcome.results()));
    }

    /** The per-item results, written straight to bytes (no tree: a 100-item push is answered often). */
    static byte[] renderPushResults(List<PushService.Result> results) {
        JsonBytes out = new JsonBytes(64 + results.size() * 160);
        out.raw("[");
        for (int i = 0; i < results.size(); i++) {
            PushService.Result r = results.get(i);
            out.raw(i == 0 ? "{\"index\":" : ",{\"index\":").number(r.index())
                    .raw(",\"message_id\":").uuid(r.messageId())
                    .raw(",\"transaction_id\":").string(r.transactionId())
                    .raw(",\"queueName\":").string(r.queueName())
                    .raw(",\"status\":").string(r.status())
                    .raw("}");
        }
        return out.raw("]").toByteArray();
    }
}
