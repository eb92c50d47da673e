package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.SeekService;

import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * Consumer-group cursor moves under {@code /api/v1} (broker/DESIGN.md, Management plane): seek a
 * queue or one partition to its end or to a timestamp, and move a group's subscription timestamp.
 */
public final class ConsumerGroupHttpService implements HttpService {
    private static final String SEEK_TARGET_REQUIRED = "Must specify toEnd=true or a timestamp";

    private final SeekService seeks;
    private final Tenancy tenancy;

    public ConsumerGroupHttpService(SeekService seeks, Tenancy tenancy) {
        this.seeks = seeks;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/consumer-groups/{group}/queues/{queue}/seek", this::seekQueue)
             .post("/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", this::seekPartition)
             .post("/consumer-groups/{group}/subscription", this::subscription);
    }

    /** Where to put the cursor: the end, or just before the first segment written at or after {@code timestamp}. */
    record Target(boolean toEnd, Instant timestamp) {
    }

    private void seekQueue(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        String queue = Names.path(req, "queue", Names.QUEUE);
        Target t = target(Json.optionalObject(req), false);
        int updated = seeks.seekQueue(tenancy.of(req), group, queue, t.toEnd(), t.timestamp());
        if (updated == 0) {
            Json.send(res, Status.NOT_FOUND_404, Json.object().put("success", false)
                    .put("error", "Queue not found or has no partitions").put("consumerGroup", group)
                    .put("queueName", queue).put("partitionsUpdated", 0));
            return;
        }
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("consumerGroup", group)
                .put("queueName", queue).put("seekToEnd", t.toEnd()).put("targetTimestamp", Wire.timestamp(t.timestamp()))
                .put("partitionsUpdated", updated));
    }

    private void seekPartition(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        String queue = Names.path(req, "queue", Names.QUEUE);
        String partition = Names.path(req, "partition", Names.PARTITION);
        // The dashboard's per-partition "skip to end" posts no body: an empty body means toEnd.
        Target t = target(Json.optionalObject(req), true);
        if (!seeks.seekPartition(tenancy.of(req), group, queue, partition, t.toEnd(), t.timestamp())) {
            Json.send(res, Status.NOT_FOUND_404, Json.object().put("success", false).put("error", "Partition not found"));
            return;
        }
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("consumerGroup", group)
                .put("queueName", queue).put("partitionName", partition).put("seekToEnd", t.toEnd())
                .put("targetTimestamp", Wire.timestamp(t.timestamp())).put("updated", true));
    }

    private void subscription(ServerRequest req, ServerResponse res) throws SQLException {
        String group = Names.path(req, "group", Names.CONSUMER_GROUP);
        JsonNode body = Json.optionalObject(req);
        JsonNode ts = body == null ? null : body.get("subscriptionTimestamp");
        if (ts == null || ts.isNull() || (ts.isTextual() && ts.asText().isEmpty())) {
            throw new BadRequestException("subscriptionTimestamp is required");
        }
        if (!ts.isTextual()) {
            throw new BadRequestException("bad body: subscriptionTimestamp must be an ISO-8601 string");
        }
        int rows = seeks.updateSubscription(tenancy.of(req), group, instant(ts.asText()));
        Json.send(res, Status.OK_200, Json.object().put("success", true).put("consumerGroup", group)
                .put("newTimestamp", ts.asText()).put("rowsUpdated", rows));
    }

    /** {"toEnd":true} wins over a timestamp; neither is a 400, except that an absent body may mean toEnd. */
    static Target target(JsonNode body, boolean emptyMeansEnd) {
        if (body == null) {
            if (emptyMeansEnd) {
                return new Target(true, null);
            }
            throw new BadRequestException(SEEK_TARGET_REQUIRED);
        }
        JsonNode toEnd = body.get("toEnd");
        if (toEnd != null && !toEnd.isNull() && !toEnd.isBoolean()) {
            throw new BadRequestException("bad body: toEnd must be a boolean");
        }
        if (toEnd != null && toEnd.asBoolean(false)) {
            return new Target(true, null);
        }
        JsonNode ts = body.get("timestamp");
        if (ts == null || ts.isNull() || (ts.isTextual() && ts.asText().isEmpty())) {
            throw new BadRequestException(SEEK_TARGET_REQUIRED);
        }
        if (!ts.isTextual()) {
            throw new BadRequestException("bad body: timestamp must be an ISO-8601 string");
        }
        return new Target(false, instant(ts.asText()));
    }

    /** ISO-8601 with an offset or Z; a date-time or date without one is read as UTC (the database's zone). */
    static Instant instant(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            try {
                return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException e2) {
                try {
                    return LocalDate.parse(text).atStartOfDay().toInstant(ZoneOffset.UTC);
                } catch (DateTimeParseException e3) {
                    throw new BadRequestException("invalid timestamp \"" + text + "\": expected ISO-8601");
                }
            }
        }
    }

}
