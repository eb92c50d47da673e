package io.queen.broker.jobs;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.queen.broker.jobs.JobsSql.column;
import static io.queen.broker.jobs.JobsSql.exec;
import static io.queen.broker.jobs.JobsSql.number;
import static io.queen.broker.jobs.JobsSql.row;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two brokers on one database run each maintenance cycle once per period between them, not twice. */
class ElectionIT {
    static final long PERIOD_MS = 400;

    /** The retention row's claims (fence), completed runs and the database clock in ms, read together. */
    record Reading(long fence, long runs, long atMs) {
    }

    static Reading read(DatabaseSettings db) {
        List<Object> r = row(db, "SELECT fence, runs, (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
                + " FROM queen.maintenance_leases WHERE task = 'retention'");
        return new Reading(((Number) r.get(0)).longValue(), ((Number) r.get(1)).longValue(),
                ((Number) r.get(2)).longValue());
    }

    @Test
    void twoBrokersRunRetentionOncePerPeriodBetweenThem() {
        DatabaseSettings db = TestPostgres.freshDatabase("election");
        Map<String, String> env = Map.of("RETENTION_INTERVAL", String.valueOf(PERIOD_MS),
                "QUEEN_TEST_JOBS_FLOOR_MS", "20", "STATS_INTERVAL_MS", "3600000",
                "RETAINED_BYTES_INTERVAL_MS", "3600000", "METRICS_FLUSH_MS", "3600000");
        try (Broker a = BrokerFixture.start(db, env); Broker b = BrokerFixture.start(db, env)) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> read(db).runs() >= 2);
            Reading first = read(db);
            // A window of eight periods on the database clock, the one the election decides by.
            Reading second = await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50))
                    .until(() -> read(db), r -> r.atMs() - first.atMs() >= 8 * PERIOD_MS);

            long runs = second.runs() - first.runs();
            double elapsedMs = second.atMs() - first.atMs();
            // One claim per period at most (plus the one straddling the window's edge). Each broker
            // alone would claim about once per period, so two without an election would be twice that.
            assertTrue(runs <= Math.floor(elapsedMs / PERIOD_MS) + 1,
                    runs + " runs in " + elapsedMs + " ms with a period of " + PERIOD_MS + " ms");
            assertTrue(runs >= 2, "the cycle keeps running: " + runs + " runs in " + elapsedMs + " ms");
            // Every claim (fence) was released by its own holder: no claim ever overlapped another,
            // or the overlapped one's release would have been refused and the gap would grow.
            assertTrue(second.fence() - second.runs() <= 1, second.toString());
            assertTrue(first.fence() - first.runs() <= 1, first.toString());

            // The operator's kill switch pauses the task cluster-wide.
            exec(db, "UPDATE queen.maintenance_leases SET enabled = false WHERE task = 'retention'");
            await().atMost(10, TimeUnit.SECONDS).until(() -> number(db,
                    "SELECT count(*) FROM queen.maintenance_leases WHERE task = 'retention' AND lease_until IS NULL") == 1);
            long paused = read(db).runs();
            await("the disabled task runs no more").during(Duration.ofMillis(4 * PERIOD_MS))
                    .atMost(Duration.ofSeconds(10)).until(() -> read(db).runs() == paused);
        }
        // Both brokers' stopped loops left the row free.
        assertEquals(1, number(db, "SELECT count(*) FROM queen.maintenance_leases WHERE task = 'retention'"
                + " AND holder IS NULL"));
    }

    @Test
    void eachSingletonTaskRowIsEnsuredWithThisBrokersPeriod() {
        DatabaseSettings db = TestPostgres.freshDatabase("election_rows");
        Map<String, String> env = Map.of("RETENTION_INTERVAL", "2500", "STATS_INTERVAL_MS", "3000",
                "RETAINED_BYTES_INTERVAL_MS", "70000", "METRICS_FLUSH_MS", "3600000");
        try (Broker ignored = BrokerFixture.start(db, env)) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> number(db,
                    "SELECT count(*) FROM queen.maintenance_leases WHERE runs >= 1") == 3);
            assertEquals(List.of("retained_bytes:70000", "retention:2500", "stats_refresh:3000"),
                    column(db, "SELECT task || ':' || period_ms FROM queen.maintenance_leases ORDER BY task"));
        }
    }
}
