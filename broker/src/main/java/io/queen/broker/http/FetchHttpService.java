package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.queen.broker.engine.FetchService;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code POST /api/v1/fetch} (request and answer shaped as the reference broker's 1.4 handler
 * has them). Body {@code {"entries":[{"queue","partition","offset",
 * "maxBytes"}],"maxWaitMs","minBytes"}}; answer {@code {"entries":[{"queue","partition","records":
 * [{"offset","transactionId","payload","ts"}],"highWatermark","logStartOffset","error"?}]}}, one
 * entry per requested entry, in order. Sizes are clamped to the broker's bounds, except the entry
 * count: dropping entries would leave a caller waiting on partitions nobody read, so more than
 * {@value FetchService#MAX_ENTRIES} is a 400, as is a negative offset (Kafka's -1/-2 sentinels are
 * not served; the bounds in every answer replace them).
 */
public final class FetchHttpService implements HttpService {
    private final FetchService fetches;
    private final Tenancy tenancy;

    public FetchHttpService(FetchService fetches, Tenancy tenancy) {
        this.fetches = fetches;
        this.tenancy = tenancy;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/fetch", this::fetch);
    }

    private void fetch(ServerRequest req, ServerResponse res) throws SQLException, InterruptedException {
        JsonNode body;
        try {
            body = Json.body(req);
        } catch (BadRequestException e) {
            throw Json.asBadBody(e);
        }
        if (!body.isObject()) {
            throw new BadRequestException("bad body: a JSON object is required");
        }
        List<FetchService.Entry> entries = entries(body.get("entries"));
        long maxWaitMs = Math.clamp(nonNegative(body, "maxWaitMs", 0), 0, FetchService.MAX_WAIT_MS);
        long minBytes = Math.max(integer(body, "minBytes", 1), 0);
        List<FetchService.EntryResult> results = fetches.fetch(tenancy.of(req), entries, maxWaitMs, minBytes);
        Json.sendBytes(res, Status.OK_200, render(results));
    }

    static List<FetchService.Entry> entries(JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new BadRequestException("bad body: entries must be an array");
        }
        if (node.size() > FetchService.MAX_ENTRIES) {
            throw new BadRequestException("bad body: " + node.size() + " entries exceeds the "
                    + FetchService.MAX_ENTRIES + "-entry limit");
        }
        List<FetchService.Entry> entries = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode e = node.get(i);
            if (!e.isObject()) {
                throw new BadRequestException("bad body: entry " + i + " must be an object");
            }
            JsonNode queue = e.get("queue");
            if (queue == null || !queue.isTextual() || queue.asText().isEmpty()) {
                throw new BadRequestException("bad body: entry " + i + " needs a queue name");
            }
            JsonNode offset = e.get("offset");
            if (offset == null || !offset.canConvertToLong() || !offset.isIntegralNumber()) {
                throw new BadRequestException("bad body: entry " + i + " needs an integer offset");
            }
            if (offset.asLong() < 0) {
                throw new BadRequestException("bad body: entry " + i + " has a negative offset; read the bounds from"
                        + " highWatermark / logStartOffset instead");
            }
            long maxBytes = integer(e, "maxBytes", FetchService.DEFAULT_MAX_BYTES);
            entries.add(new FetchService.Entry(Names.check(Names.QUEUE, queue.asText(), "entries[" + i + "].queue"),
                    Names.check(Names.PARTITION, partition(e.get("partition"), i), "entries[" + i + "].partition"),
                    offset.asLong(),
                    (int) Math.clamp(maxBytes, 1, FetchService.MAX_BYTES_PER_ENTRY)));
        }
        return entries;
    }

    /** A partition is named; a number is taken as its name ("3"), as a Kafka-style caller sends it. */
    private static String partition(JsonNode node, int entry) {
        if (node == null || node.isNull()) {
            return "Default";
        }
        if (node.isTextual() && !node.asText().isEmpty()) {
            return node.asText();
        }
        if (node.isIntegralNumber() && node.canConvertToLong()) {
            return Long.toString(node.asLong());
        }
        throw new BadRequestException("bad body: entry " + entry + " has a partition that is neither a name nor a number");
    }

    private static long integer(JsonNode node, String field, long fallback) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new BadRequestException("bad body: " + field + " must be an integer");
        }
        return v.asLong();
    }

    private static long nonNegative(JsonNode node, String field, long fallback) {
        long v = integer(node, field, fallback);
        if (v < 0) {
            throw new BadRequestException("bad body: " + field + " must not be negative");
        }
        return v;
    }

    /** Payloads are spliced as stored: the JSON the producer sent, byte for byte. */
    static byte[] render(List<FetchService.EntryResult> results) {
        long size = 32;
        for (FetchService.EntryResult r : results) {
            size += 160 + r.queue().length() + r.partition().length();
            for (FetchService.Record m : r.records()) {
                size += 96 + m.payload().length + (m.transactionId() == null ? 0 : m.transactionId().length());
            }
        }
        JsonBytes out = new JsonBytes((int) Math.min(size, Integer.MAX_VALUE - 8));
        out.raw("{\"entries\":[");
        for (int i = 0; i < results.size(); i++) {
            FetchService.EntryResult r = results.get(i);
            out.raw(i == 0 ? "{\"queue\":" : ",{\"queue\":").string(r.queue())
                    .raw(",\"partition\":").string(r.partition())
                    .raw(",\"records\":[");
            for (int j = 0; j < r.records().size(); j++) {
                FetchService.Record m = r.records().get(j);
                out.raw(j == 0 ? "{\"offset\":" : ",{\"offset\":").number(m.offset())
                        .raw(",\"transactionId\":").string(m.transactionId())
                        .raw(",\"payload\":");
                if (m.payload().length == 0) {
                    out.raw("null");
                } else {
                    out.raw(m.payload());
                }
                out.raw(",\"ts\":").string(Wire.timestamp(m.createdAt())).raw("}");
            }
            out.raw("],\"highWatermark\":").number(r.highWatermark())
                    .raw(",\"logStartOffset\":").number(r.logStartOffset());
            if (r.error() != null) {
                out.raw(",\"error\":").string(r.error());
            }
            out.raw("}");
        }
        return out.raw("]}").toByteArray();
    }
}
