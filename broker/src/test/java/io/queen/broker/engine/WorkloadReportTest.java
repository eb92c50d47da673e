package io.queen.broker.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.broker.store.AnalyticsStore.QueueBucket;
import io.queen.broker.store.AnalyticsStore.QueueNow;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WorkloadReportTest {
    private static final Instant FROM = Instant.parse("2026-09-09T10:00:30Z");
    private static final Instant TO = Instant.parse("2026-09-09T10:14:59Z");
    private static final WorkloadReport.Filter ALL = new WorkloadReport.Filter(null, null, null);

    private static QueueNow queue(String name, String namespace, String task, long pending, long groups) {
        return new QueueNow(UUID.nameUUIDFromBytes(name.getBytes()), name, namespace, task, pending, 0, 0, 10, 2, groups);
    }

    private static QueueBucket bucket(QueueNow q, String at, long push, long pop, long lagWeight, Long maxLag) {
        return new QueueBucket(q.id(), Instant.parse(at), push, push, pop, 0, 0, 0, 0, 0, 0, 0, 0, lagWeight, maxLag,
                3, 2);
    }

    @Test
    void theAxisRunsFromTheBucketOfFromToTheBucketOfTo() {
        List<Instant> axis = WorkloadReport.axis(FROM, TO, 5);
        assertEquals(List.of(Instant.parse("2026-09-09T10:00:00Z"), Instant.parse("2026-09-09T10:05:00Z"),
                Instant.parse("2026-09-09T10:10:00Z")), axis);
        assertThrows(IllegalArgumentException.class,
                () -> WorkloadReport.axis(Instant.parse("0001-01-01T00:00:00Z"), TO, 1));
    }

    @Test
    void groupsSumTheirQueuesAndLeaveUntouchedBucketsNull() {
        QueueNow a = queue("a", "ns", "t1", 4, 1);
        QueueNow b = queue("b", "ns", "t2", 6, 0);
        QueueNow c = queue("c", null, null, 1, 0);
        ObjectNode body = WorkloadReport.build(FROM, TO, 5, WorkloadReport.GroupBy.NAMESPACE, ALL, List.of(a, b, c),
                List.of(bucket(a, "2026-09-09T10:00:00Z", 5, 2, 20, 30L),
                        bucket(b, "2026-09-09T10:00:00Z", 1, 1, 40, 50L),
                        bucket(b, "2026-09-09T10:10:00Z", 7, 0, 0, null)));
        assertEquals("[\"2026-09-09T10:00:00Z\",\"2026-09-09T10:05:00Z\",\"2026-09-09T10:10:00Z\"]",
                body.get("buckets").toString());
        assertEquals("2026-09-09T10:00:30.000Z", body.get("timeRange").get("from").asText());
        ObjectNode ns = (ObjectNode) body.get("rows").get(1);
        assertEquals("ns", ns.get("key").asText());
        assertEquals(13, ns.get("window").get("pushMessages").asLong());
        assertEquals(20, ns.get("window").get("avgLagMs").asLong(), "(20 + 40) / 3 pops");
        assertEquals(50, ns.get("window").get("maxLagMs").asLong());
        assertEquals("[6,null,7]", ns.get("series").get("push").toString());
        assertEquals("[20,null,null]", ns.get("series").get("avgLagMs").toString(), "no pops: unmeasured");
        assertEquals(10, ns.get("now").get("pending").asLong());
        assertEquals(1, ns.get("now").get("queuesWithoutGroup").asLong());
        assertEquals(6, ns.get("now").get("pendingWithoutGroup").asLong());
        assertEquals(3, body.get("tenant").get("queues").asInt());
        assertTrue(body.get("rows").get(0).get("window").get("avgLagMs").isNull(), "the '' group popped nothing");
    }
}
