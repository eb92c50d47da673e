package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.store.Database;
import io.queen.broker.store.MaintenanceStore;

import java.sql.SQLException;

/**
 * The retained-bytes slow lane (RETAINED_BYTES_INTERVAL_MS, one replica per period, advisory lock
 * 737003): the one stats aggregate that must scan the segments table, hence its own slow cadence.
 */
final class RetainedBytesCycle implements Cycle {
    private final Database database;

    RetainedBytesCycle(Database database) {
        this.database = database;
    }

    @Override
    public Outcome run() throws SQLException {
        return AdvisoryBelt.run(database, AdvisoryBelt.RETAINED_BYTES, "retained bytes", c -> {
            JsonNode r = MaintenanceStore.refreshRetainedBytes(c);
            return Outcome.worked(r.path("bytesTotal").asLong() + " bytes retained in "
                    + r.path("segmentsTotal").asLong() + " segments, written to " + r.path("queuesUpdated").asLong()
                    + " queue stat rows");
        });
    }
}
