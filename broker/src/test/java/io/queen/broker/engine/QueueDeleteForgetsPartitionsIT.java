package io.queen.broker.engine;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.store.Database;
import io.queen.broker.store.LogStore;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A queue delete hands the deleted partitions' ids to the push path once it committed, so the dedup
 * cache gives back what it held of them (the warm-up's 50,000 messages were most of the default
 * budget, kept for an hour after its queue was gone). Another queue's partitions are not named, and
 * a delete of a queue that does not exist names none.
 */
class QueueDeleteForgetsPartitionsIT {
    @Test
    void aDeleteNamesExactlyTheQueuesPartitions() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("queue_delete_forgets");
        try (Broker ignored = BrokerFixture.start(db, Map.of()); Database database = Database.open(db)) {
            Set<UUID> doomed = new HashSet<>();
            UUID kept;
            try (Connection c = database.connection()) {
                c.setAutoCommit(true);
                for (String p : List.of("p0", "p1", "p2")) {
                    doomed.add(LogStore.provision(c, Tenants.DEFAULT, "doomed", p).partitionId());
                }
                kept = LogStore.provision(c, Tenants.DEFAULT, "kept", "p0").partitionId();
            }
            List<List<UUID>> told = new ArrayList<>();
            QueueAdminService admin = new QueueAdminService(database, new QueueCatalog(), (t, q) -> { }, told::add,
                    QueueAdminService.DEFAULT_SAFE_FLOOR_SECONDS);

            assertTrue(admin.delete(Tenants.DEFAULT, "doomed").existed());
            assertEquals(1, told.size());
            assertEquals(doomed, new HashSet<>(told.get(0)));
            assertFalse(told.get(0).contains(kept));

            assertFalse(admin.delete(Tenants.DEFAULT, "never-was").existed());
            assertEquals(1, told.size(), "nothing to forget for a queue that did not exist");
        }
    }
}
