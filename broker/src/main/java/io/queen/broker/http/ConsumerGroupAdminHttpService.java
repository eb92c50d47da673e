package io.queen.broker.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.ConsumerGroupAdminService;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.SQLException;

/**
 * Consumer-group management under {@code /api/v1} (broker/DESIGN.md, Management plane): the listing
 * with lag, the lagging cursors, one group's cursors, and the delete of a group on every queue or
 * on one queue. The cursor moves (seek, subscription) are {@link ConsumerGroupHttpService}'s.
 */
public final class ConsumerGroupAdminHttpService implements HttpService {
    private final ConsumerGroupAdminService groups;
    private final Tenancy tenancy;

    public ConsumerGroupAdminHttpService(ConsumerGroupAdminService groups, Tenancy tenancy) {
        this.groups = groups;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        // The static "lagging" segment is registered before the {group} parameter so it wins.
        rules.get("/consumer-groups", this::list)
             .get("/consumer-groups/lagging", this::lagging)
             .get("/consumer-groups/{group}", this::detail)
             .delete("/consumer-groups/{group}", this::deleteGroup)
             .delete("/consumer-groups/{group}/queues/{queue}", this::deleteOnQueue);
    }

    private void list(ServerRequest req, ServerResponse res) throws SQLException {
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (ConsumerGroupAdminService.GroupOnQueue g : groups.groups(tenancy.of(req))) {
            ObjectNode o = out.addObject().put("name", g.group());
            o.putArray("topics").add(g.queue());
            // members counts cursor rows (partitions the group holds a cursor on), as the reference does.
            o.put("queueName", g.queue()).put("members", g.cursors()).put("partitionCursors", g.cursors())
                    .put("partitionsWithLag", g.partitionsWithLag()).put("totalLag", g.totalLag())
                    .put("maxTimeLag", g.maxTimeLagSeconds())
                    .put("state", g.state())
                    .put("storage", "segments")
                    .put("subscriptionMode", g.subscriptionMode())
                    .put("subscriptionTimestamp", Wire.timestamp(g.subscriptionTimestamp()))
                    .put("subscriptionCreatedAt", Wire.timestamp(g.subscriptionCreatedAt()))
                    .put("conflation", g.conflation());
        }
        Json.send(res, Status.OK_200, out);
    }

    private void lagging(ServerRequest req, ServerResponse res) throws SQLException {
        int minLag = new Params(req.query()).integer("minLagSeconds", 3600);
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (ConsumerGroupAdminService.LaggingCursor l : groups.lagging(tenancy.of(req), minLag)) {
            out.addObject().put("consumer_group", l.group()).put("queue_name", l.queue())
                    .put("partition_name", l.partition()).put("partition_id", l.partitionId().toString())
                    .put("worker_id", l.workerId()).put("offset_lag", l.offsetLag())
                    .put("time_lag_seconds", l.timeLagSeconds())
                    .put("lag_hours", BigDecimal.valueOf(l.timeLagSeconds()).divide(BigDecimal.valueOf(3600), 2,
                            RoundingMode.HALF_UP))
                    .put("oldest_unconsumed_at", Wire.timestamp(l.oldestUnconsumedAt()))
                    .putNull("last_consumed_at");
        }
        Json.send(res, Status.OK_200, out);
    }

    /** {@code {<queue>: {conflation, partitions: [...]}}}; {@code {}} when the group holds no cursor. */
    private void detail(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        ObjectNode out = Json.object();
        for (ConsumerGroupAdminService.GroupCursor g : groups.cursors(tenancy.of(req), group)) {
            ObjectNode queue = (ObjectNode) out.get(g.queue());
            if (queue == null) {
                queue = out.putObject(g.queue());
                queue.put("conflation", g.conflation());
                queue.putArray("partitions");
            }
            ((ArrayNode) queue.get("partitions")).addObject().put("partition", g.partition())
                    .put("workerId", g.workerId()).putNull("lastConsumedAt")
                    .put("totalConsumed", g.totalConsumed()).put("offsetLag", g.offsetLag())
                    .put("timeLagSeconds", g.timeLagSeconds()).put("leaseActive", g.leaseActive());
        }
        Json.send(res, Status.OK_200, out);
    }

    private void deleteGroup(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        boolean deleteMetadata = new Params(req.query()).bool("deleteMetadata", true);
        int deleted = groups.delete(tenancy.of(req), group, null, deleteMetadata);
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("consumerGroup", group)
                .put("deletedPartitions", deleted).put("metadataDeleted", deleteMetadata));
    }

    private void deleteOnQueue(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        String queue = Names.path(req, "queue", Names.QUEUE);
        boolean deleteMetadata = new Params(req.query()).bool("deleteMetadata", true);
        int deleted = groups.delete(tenancy.of(req), group, queue, deleteMetadata);
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("consumerGroup", group)
                .put("queueName", queue).put("deletedPartitions", deleted)
                .put("metadataDeleted", deleteMetadata));
    }
}
