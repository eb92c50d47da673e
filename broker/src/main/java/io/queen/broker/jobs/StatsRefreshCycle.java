package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.store.Database;
import io.queen.broker.store.MaintenanceStore;

import java.sql.SQLException;

/**
 * The stats reconciler (STATS_INTERVAL_MS, one replica per period, advisory lock 737002):
 * rewrites the partition, queue, namespace, task and system rows of queen.stats from the log
 * tables' watermarks (028_retained_bytes, log_stats_refresh_v1). A queue that a delete or a
 * tenant purge holds while the refresh starts is skipped for that pass (named in the FINE line),
 * never a failed run.
 */
final class StatsRefreshCycle implements Cycle {
    private final Database database;

    StatsRefreshCycle(Database database) {
        this.database = database;
    }

    @Override
    public Outcome run() throws SQLException {
        return AdvisoryBelt.run(database, AdvisoryBelt.STATS, "stats refresh", c -> {
            JsonNode r = MaintenanceStore.statsRefresh(c);
            // A queue being deleted (or reconfigured) right now is left to the next pass: routine too.
            StringBuilder skipped = new StringBuilder();
            r.path("skipped").forEach(name -> skipped.append(skipped.isEmpty() ? "" : ", ").append(name.asText()));
            // Runs every few seconds whether or not anything changed: a routine line, not news.
            return Outcome.idle("stats refreshed for " + r.path("queues").asLong() + " queues, "
                    + r.path("namespaces").asLong() + " namespaces, " + r.path("tasks").asLong() + " tasks ("
                    + r.path("partitions").asLong() + " partition rows changed)"
                    + (skipped.isEmpty() ? "" : "; skipped queues busy being deleted or reconfigured: " + skipped));
        });
    }
}
