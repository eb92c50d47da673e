package io.queen.broker.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.broker.store.AnalyticsStore.QueueBucket;
import io.queen.broker.store.AnalyticsStore.QueueNow;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The body of {@code GET /api/v1/analytics/workload}: the tenant's per-queue minute counters and
 * current gauges folded into groups (by namespace, task or queue), each with window totals, a
 * bucketed series over a gap-free axis (null where a group had no row) and its gauges now; plus the
 * same for the whole tenant, filters ignored. Key names and nesting are the ones the reference
 * broker answers (its dashboard reads them); the arithmetic is ours. Pure: built from the rows the
 * store read, so it is tested without a database.
 */
public final class WorkloadReport {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final DateTimeFormatter SECONDS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);
    /** Longest axis built; only a nonsense window (centuries) reaches it. */
    static final long MAX_BUCKETS = 200_000;

    public enum GroupBy {
        NAMESPACE, TASK, QUEUE;

        /** Null for anything but namespace, task or queue. */
        public static GroupBy parse(String text) {
            return switch (text) {
                case "namespace" -> NAMESPACE;
                case "task" -> TASK;
                case "queue" -> QUEUE;
                default -> null;
            };
        }

        String wire() {
            return name().toLowerCase(Locale.ROOT);
        }

        String key(QueueNow q) {
            return switch (this) {
                case QUEUE -> q.name();
                case TASK -> q.task() == null ? "" : q.task();
                case NAMESPACE -> q.namespace() == null ? "" : q.namespace();
            };
        }
    }

    /**
     * Which queues the rows cover. A null namespace or task is no filter, an empty one selects the
     * queues without one (as the reference broker reads {@code namespace=}); a null queue is no filter.
     */
    public record Filter(String namespace, String task, String queue) {
        boolean keeps(QueueNow q) {
            return (namespace == null || namespace.equals(q.namespace() == null ? "" : q.namespace()))
                    && (task == null || task.equals(q.task() == null ? "" : q.task()))
                    && (queue == null || queue.equals(q.name()));
        }
    }

    private WorkloadReport() {
    }

    /**
     * @param bucketMinutes the width the buckets were summed at
     * @throws IllegalArgumentException when the window needs more than {@link #MAX_BUCKETS} buckets
     */
    public static ObjectNode build(Instant from, Instant to, int bucketMinutes, GroupBy groupBy, Filter filter,
                                   List<QueueNow> queues, List<QueueBucket> buckets) {
        List<Instant> axis = axis(from, to, bucketMinutes);
        Map<UUID, Map<Instant, QueueBucket>> byQueue = new HashMap<>();
        for (QueueBucket b : buckets) {
            byQueue.computeIfAbsent(b.queueId(), k -> new HashMap<>()).put(b.bucket(), b);
        }

        TreeMap<String, List<QueueNow>> groups = new TreeMap<>();
        for (QueueNow q : queues) {
            if (filter.keeps(q)) {
                groups.computeIfAbsent(groupBy.key(q), k -> new ArrayList<>()).add(q);
            }
        }

        ObjectNode body = MAPPER.createObjectNode();
        body.putObject("timeRange").put("from", MILLIS.format(from)).put("to", MILLIS.format(to));
        body.put("bucketMinutes", bucketMinutes);
        body.put("groupBy", groupBy.wire());
        ArrayNode axisNode = body.putArray("buckets");
        axis.forEach(b -> axisNode.add(SECONDS.format(b)));
        ArrayNode rows = body.putArray("rows");
        groups.forEach((key, members) -> {
            ObjectNode row = rows.addObject().put("key", key);
            group(row, members, byQueue, axis);
            if (groupBy == GroupBy.QUEUE) {
                QueueNow only = members.get(0);
                row.put("namespace", only.namespace() == null ? "" : only.namespace());
                row.put("task", only.task() == null ? "" : only.task());
            }
        });
        ObjectNode tenant = body.putObject("tenant");
        if (!queues.isEmpty()) {
            group(tenant, queues, byQueue, axis);
        }
        return body;
    }

    /** The bucket starts from the one holding {@code from} to the one holding {@code to}. */
    static List<Instant> axis(Instant from, Instant to, int bucketMinutes) {
        long step = bucketMinutes * 60L;
        // queen.obs_bucket_v1 bins from 2000-01-01T00:00Z, which is itself on a 6-hour boundary of
        // the epoch, so flooring epoch seconds to the width lands on the same bucket starts.
        long first = Math.floorDiv(from.getEpochSecond(), step) * step;
        long last = Math.floorDiv(to.getEpochSecond(), step) * step;
        long n = last < first ? 0 : (last - first) / step + 1;
        if (n > MAX_BUCKETS) {
            throw new IllegalArgumentException("workload window spans " + n + " buckets (limit " + MAX_BUCKETS + ")");
        }
        List<Instant> out = new ArrayList<>((int) n);
        for (long t = first; t <= last; t += step) {
            out.add(Instant.ofEpochSecond(t));
        }
        return out;
    }

    /** Sums of counters over a set of rows. */
    private static final class Sums {
        long pushRequests, pushMessages, popMessages, popEmpty, ackRequests, ackSuccess, ackFailed, transactions,
                conflated, partitionsCreated, partitionsDeleted, lagWeight, parkedSum, minutes;
        Long maxLag;
        /** Sum over the member queues of each one's average parked gauge. */
        BigDecimal parked = BigDecimal.ZERO;

        void add(QueueBucket b) {
            pushRequests += b.pushRequests();
            pushMessages += b.pushMessages();
            popMessages += b.popMessages();
            popEmpty += b.popEmpty();
            ackRequests += b.ackRequests();
            ackSuccess += b.ackSuccess();
            ackFailed += b.ackFailed();
            transactions += b.transactions();
            conflated += b.conflated();
            partitionsCreated += b.partitionsCreated();
            partitionsDeleted += b.partitionsDeleted();
            lagWeight += b.lagWeight();
            parkedSum += b.parkedSum();
            minutes += b.minutes();
            if (b.maxLagPopped() != null && (maxLag == null || b.maxLagPopped() > maxLag)) {
                maxLag = b.maxLagPopped();
            }
        }
    }

    private static void group(ObjectNode out, List<QueueNow> members, Map<UUID, Map<Instant, QueueBucket>> byQueue,
                              List<Instant> axis) {
        Sums window = new Sums();
        Map<Instant, Sums> perBucket = new HashMap<>();
        long touched = 0;
        long active = 0;
        for (QueueNow q : members) {
            Map<Instant, QueueBucket> rows = byQueue.getOrDefault(q.id(), Map.of());
            Sums queueWindow = new Sums();
            for (QueueBucket b : rows.values()) {
                Sums s = perBucket.computeIfAbsent(b.bucket(), k -> new Sums());
                s.add(b);
                s.parked = s.parked.add(average(b.parkedSum(), b.minutes()));
                queueWindow.add(b);
            }
            if (!rows.isEmpty()) {
                touched++;
                window.parked = window.parked.add(average(queueWindow.parkedSum, queueWindow.minutes));
            }
            if (queueWindow.pushMessages + queueWindow.popMessages > 0) {
                active++;
            }
            merge(window, queueWindow);
        }

        out.put("queues", members.size());
        out.putObject("window")
                .put("pushMessages", window.pushMessages)
                .put("pushRequests", window.pushRequests)
                .put("popMessages", window.popMessages)
                .put("popEmpty", window.popEmpty)
                .put("ackRequests", window.ackRequests)
                .put("ackSuccess", window.ackSuccess)
                .put("ackFailed", window.ackFailed)
                .put("transactions", window.transactions)
                .put("conflated", window.conflated)
                .put("partitionsCreated", window.partitionsCreated)
                .put("partitionsDeleted", window.partitionsDeleted)
                .put("parkedAvg", window.parked.setScale(2, RoundingMode.HALF_UP))
                .put("avgLagMs", meanLag(window))
                .put("maxLagMs", window.maxLag);

        ObjectNode series = out.putObject("series");
        ArrayNode push = series.putArray("push");
        ArrayNode pop = series.putArray("pop");
        ArrayNode popEmpty = series.putArray("popEmpty");
        ArrayNode ackFailed = series.putArray("ackFailed");
        ArrayNode parked = series.putArray("parked");
        ArrayNode avgLag = series.putArray("avgLagMs");
        ArrayNode maxLag = series.putArray("maxLagMs");
        for (Instant b : axis) {
            Sums s = perBucket.get(b);
            if (s == null) {
                for (ArrayNode a : List.of(push, pop, popEmpty, ackFailed, parked, avgLag, maxLag)) {
                    a.addNull();
                }
                continue;
            }
            push.add(s.pushMessages);
            pop.add(s.popMessages);
            popEmpty.add(s.popEmpty);
            ackFailed.add(s.ackFailed);
            parked.add(s.parked.setScale(2, RoundingMode.HALF_UP));
            avgLag.add(meanLag(s));
            maxLag.add(s.maxLag);
        }

        long pending = 0, processing = 0, dead = 0, bytes = 0, partitions = 0, groups = 0;
        long withoutGroup = 0, pendingWithoutGroup = 0;
        for (QueueNow q : members) {
            pending += q.pending();
            processing += q.processing();
            dead += q.deadLetter();
            bytes += q.retainedBytes();
            partitions += q.partitions();
            groups += q.groups();
            if (q.groups() == 0) {
                withoutGroup++;
                pendingWithoutGroup += q.pending();
            }
        }
        out.putObject("now")
                .put("pending", pending)
                .put("processing", processing)
                .put("deadLetter", dead)
                .put("retainedBytes", bytes)
                .put("partitions", partitions)
                .put("groups", groups)
                .put("queuesWithoutGroup", withoutGroup)
                .put("pendingWithoutGroup", pendingWithoutGroup)
                .put("queuesTouched", touched)
                .put("queuesActive", active);
    }

    private static void merge(Sums into, Sums from) {
        into.pushRequests += from.pushRequests;
        into.pushMessages += from.pushMessages;
        into.popMessages += from.popMessages;
        into.popEmpty += from.popEmpty;
        into.ackRequests += from.ackRequests;
        into.ackSuccess += from.ackSuccess;
        into.ackFailed += from.ackFailed;
        into.transactions += from.transactions;
        into.conflated += from.conflated;
        into.partitionsCreated += from.partitionsCreated;
        into.partitionsDeleted += from.partitionsDeleted;
        into.lagWeight += from.lagWeight;
        into.parkedSum += from.parkedSum;
        into.minutes += from.minutes;
        if (from.maxLag != null && (into.maxLag == null || from.maxLag > into.maxLag)) {
            into.maxLag = from.maxLag;
        }
    }

    /** The pop-weighted mean lag rounded to whole ms; null when nothing was popped (unmeasured, not zero). */
    private static Long meanLag(Sums s) {
        if (s.popMessages <= 0) {
            return null;
        }
        return BigDecimal.valueOf(s.lagWeight).divide(BigDecimal.valueOf(s.popMessages), 0, RoundingMode.HALF_UP)
                .longValue();
    }

    private static BigDecimal average(long sum, long n) {
        return n <= 0 ? BigDecimal.ZERO : BigDecimal.valueOf(sum).divide(BigDecimal.valueOf(n), 20, RoundingMode.HALF_UP);
    }
}
