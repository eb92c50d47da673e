package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.MessageBrowseService;
import io.queen.broker.engine.segment.CorruptSegmentException;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.TxnHash;

import java.sql.SQLException;
import java.time.Instant;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Message browsing under {@code /api/v1} (broker/DESIGN.md, Management plane): the listing and the
 * read of one message by (partitionId, transactionId). Deleting and replaying dead letters at the
 * same address are {@link DeadLetterHttpService}'s; these routes only answer GET, so neither
 * shadows the other.
 */
public final class MessagesHttpService implements HttpService {
    private static final Logger LOG = Logger.getLogger(MessagesHttpService.class.getName());
    private static final Set<String> STATUSES = Set.of("pending", "processing", "completed", "dead_letter");

    private final MessageBrowseService messages;
    private final Tenancy tenancy;

    public MessagesHttpService(MessageBrowseService messages, Tenancy tenancy) {
        this.messages = messages;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/messages", this::list)
             .get("/messages/{partitionId}/{transactionId}", this::read);
    }

    private void list(ServerRequest req, ServerResponse res) throws SQLException {
        MessageBrowseService.Filter filter = filter(new Params(req.query()));
        MessageBrowseService.Page page = messages.list(tenancy.of(req), filter);
        ObjectNode body = Json.object();
        ArrayNode out = body.putArray("messages");
        for (MessageBrowseService.Listed l : page.messages()) {
            out.add(listed(l));
        }
        body.set("mode", mode(page.mode().hasQueueMode(), page.mode().namedGroups(), listingType(page.mode())));
        // total is the page length (reference).
        body.put("total", out.size());
        Json.send(res, Status.OK_200, body);
    }

    private void read(ServerRequest req, ServerResponse res) throws SQLException {
        var path = req.path().pathParameters();
        String pid = path.get("partitionId");
        String txn = Names.path(req, "transactionId", Names.TRANSACTION_ID);
        MessageBrowseService.Message m;
        try {
            m = messages.read(tenancy.of(req), Names.uuid("partitionId", pid), txn);
        } catch (CorruptSegmentException e) {
            LOG.warning("message " + txn + " of partition " + pid + ": " + e.getMessage());
            Json.error(res, Status.INTERNAL_SERVER_ERROR_500, "frame decode failed");
            return;
        }
        if (m == null) {
            Json.error(res, Status.NOT_FOUND_404, "Message not found");
            return;
        }
        Frame f = m.frame();
        MessageBrowseService.Detail d = m.detail();
        JsonNode data = Json.storedOrNull(m.data());
        ObjectNode body = Json.object().put("id", f.messageId().toString()).put("transactionId", f.transactionId());
        body.set("data", data);
        body.set("payload", data);
        body.put("traceId", f.traceId() == null ? null : f.traceId().toString())
                .put("producerSub", f.producerSub())
                .put("createdAt", Wire.timestamp(m.createdAt()))
                .put("partitionId", pid)
                .put("partition", d.partition())
                .put("isEncrypted", f.encrypted())
                .put("queue", d.queue())
                .put("queuePath", d.queue() + "/" + d.partition())
                .put("namespace", d.namespace())
                .put("task", d.task())
                .put("status", d.status())
                .put("errorMessage", d.error())
                // A live message reports 0: retries are counted per (partition, group), not per message.
                .put("retryCount", d.dlqRetryCount())
                .put("leaseExpiresAt", Wire.timestamp(d.queueModeLeaseExpiresAt()));
        ArrayNode groups = body.putArray("consumerGroups");
        for (MessageBrowseService.GroupPosition g : m.groups()) {
            groups.addObject().put("name", g.group()).put("group", g.group()).put("consumed", g.consumed())
                    .put("leaseExpiresAt", Wire.timestamp(g.leaseExpiresAt()));
        }
        body.set("mode", mode(d.hasQueueMode(), d.namedGroups(), d.namedGroups() > 0 ? "bus" : "queue"));
        body.putObject("queueConfig").put("leaseTime", d.leaseTime()).put("retryLimit", d.retryLimit())
                .put("retryDelay", d.retryDelay()).put("ttl", d.ttl()).put("priority", d.priority());
        Json.send(res, Status.OK_200, body);
    }

    private static MessageBrowseService.Filter filter(Params q) {
        String status = q.name("status", Names.FILTER).orElse(null);
        if (status != null && !STATUSES.contains(status)) {
            throw new BadRequestException("invalid query parameter status=" + status
                    + ": expected pending, processing, completed or dead_letter");
        }
        int limit = q.integer("limit", 200);
        int offset = q.integer("offset", 0);
        Params.checkPage(limit, offset);
        // The reference's older route spelled namespace "ns"; both are accepted, namespace wins.
        String namespace = q.name("namespace", Names.NAMESPACE).or(() -> q.name("ns", Names.NAMESPACE)).orElse(null);
        return new MessageBrowseService.Filter(q.name("queue", Names.QUEUE).orElse(null),
                q.name("partition", Names.PARTITION).orElse(null), namespace, q.name("task", Names.TASK).orElse(null),
                status, instant(q, "from"), instant(q, "to"), limit, offset);
    }

    private static Instant instant(Params q, String name) {
        return q.string(name).map(ConsumerGroupHttpService::instant).orElse(null);
    }

    private static ObjectNode listed(MessageBrowseService.Listed l) {
        MessageBrowseService.ListedFrame r = l.row();
        Frame f = l.frame();
        ObjectNode o = Json.object()
                .put("id", f == null ? null : f.messageId().toString())
                .put("transactionId", f == null ? null : f.transactionId())
                .put("txnHash", TxnHash.hex(r.txnHash()))
                .put("partitionId", r.partitionId().toString())
                .put("queuePath", r.queue() + "/" + r.partition())
                .put("queue", r.queue())
                .put("partition", r.partition())
                .put("namespace", r.namespace())
                .put("task", r.task())
                .put("status", r.status())
                .put("queueStatus", r.status());
        o.putObject("busStatus").put("consumedBy", r.consumedBy()).put("totalGroups", r.totalGroups());
        o.put("traceId", f == null || f.traceId() == null ? null : f.traceId().toString())
                .put("producerSub", f == null ? null : f.producerSub())
                // False when retention removed the segment between the listing and the read.
                .put("payloadAvailable", f != null);
        o.putObject("segment").put("seq", r.baseOffset()).put("frameIdx", r.frameIdx());
        o.put("createdAt", Wire.timestamp(r.createdAt())).put("leaseExpiresAt", Wire.timestamp(r.leaseExpiresAt()));
        JsonNode data = f == null ? NullNode.getInstance() : Json.storedOrNull(l.data());
        o.set("data", data);
        o.set("payload", data);
        return o;
    }

    private static String listingType(MessageBrowseService.Mode m) {
        if (m.hasQueueMode()) {
            return m.namedGroups() > 0 ? "hybrid" : "queue";
        }
        return m.namedGroups() > 0 ? "bus" : "none";
    }

    private static ObjectNode mode(boolean hasQueueMode, int namedGroups, String type) {
        return Json.object().put("hasQueueMode", hasQueueMode).put("busGroupsCount", namedGroups).put("type", type);
    }
}
