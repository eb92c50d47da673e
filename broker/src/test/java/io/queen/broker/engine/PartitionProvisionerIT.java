package io.queen.broker.engine;

import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.store.Database;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * First pushes to new partitions are provisioned by one statement per queue for all requests that
 * wait together, and each partition is created and counted (queue_lag_metrics.partitions_created)
 * exactly once, however the requests overlap. Real PostgreSQL; the schema comes from a broker's boot.
 */
class PartitionProvisionerIT {
    private static final UUID TENANT = new UUID(0, 0);
    private static Broker broker;
    private static DatabaseSettings db;
    private static Database database;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("partition_provisioner");
        broker = BrokerFixture.start(db, Map.of());
        database = Database.open(db);
    }

    @AfterAll
    static void stop() {
        if (database != null) {
            database.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    private static PushPlan.Group group(String queue, String partition) {
        return new PushPlan.Group(queue, partition);
    }

    /** A task that provisions one request's groups. */
    private static Callable<Void> provisioning(PartitionProvisioner p, List<PushPlan.Group> request) {
        return () -> {
            p.provision(TENANT, request);
            return null;
        };
    }

    /** Runs the tasks on virtual threads, once {@code release} returns, and waits for all of them. */
    private static void runAll(List<Callable<Void>> tasks, Callable<Void> release) throws Exception {
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> done = new ArrayList<>();
            for (Callable<Void> t : tasks) {
                done.add(threads.submit(t));
            }
            release.call();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Each request provisions its groups on a virtual thread; returns them once all are done. */
    private static List<List<PushPlan.Group>> runConcurrently(PartitionProvisioner p, List<List<PushPlan.Group>> requests)
            throws Exception {
        runAll(requests.stream().map(r -> provisioning(p, r)).toList(), () -> null);
        return requests;
    }

    /**
     * Runs the tasks while the queue's creator lock is held, as if another request were creating,
     * until {@code wants} wants are queued behind it; then lets them go and waits for all.
     */
    private static void runPiledUp(PartitionProvisioner p, String queue, int wants, List<Callable<Void>> tasks)
            throws Exception {
        ReentrantLock creating = p.lockOf(TENANT, queue);
        creating.lock();
        try {
            runAll(tasks, () -> {
                await("every want queues behind the creator").atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(5)).until(() -> p.queued(TENANT, queue) >= wants);
                assertEquals(wants, p.queued(TENANT, queue));
                creating.unlock();
                return null;
            });
        } finally {
            if (creating.isHeldByCurrentThread()) {
                creating.unlock();
            }
        }
    }

    private static long count(String sql, String queue) throws SQLException {
        try (Connection c = TestPostgres.connect(db); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static long partitionsOf(String queue) throws SQLException {
        return count("SELECT count(*) FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id "
                + "WHERE q.name = ?", queue);
    }

    private static long partitionsCounted(String queue) throws SQLException {
        return count("SELECT coalesce(sum(m.partitions_created), 0) FROM queen.queue_lag_metrics m "
                + "JOIN queen.queues q ON q.id = m.queue_id WHERE q.name = ?", queue);
    }

    /** Same name, same id; different names, different ids; every group answered. */
    private static Map<String, UUID> idsByName(List<List<PushPlan.Group>> requests) {
        Map<String, UUID> ids = new HashMap<>();
        for (List<PushPlan.Group> r : requests) {
            for (PushPlan.Group g : r) {
                assertNotNull(g.provisioned, g.partition);
                UUID before = ids.putIfAbsent(g.partition, g.provisioned.partitionId());
                if (before != null) {
                    assertEquals(before, g.provisioned.partitionId(), "one id per name: " + g.partition);
                }
            }
        }
        assertEquals(ids.size(), new HashSet<>(ids.values()).size(), "distinct names have distinct ids");
        return ids;
    }

    @Test
    void requestsWaitingBehindACreatorAreProvisionedByOneStatement() throws Exception {
        PartitionProvisioner p = new PartitionProvisioner(database, new QueueCatalog());
        String queue = "prov-pile-" + UUID.randomUUID();
        List<List<PushPlan.Group>> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            // Overlapping names across requests, and a request naming two partitions.
            requests.add(List.of(group(queue, "p" + (i % 12)), group(queue, "extra-" + i)));
        }
        runPiledUp(p, queue, 40, requests.stream().map(r -> provisioning(p, r)).toList());
        assertEquals(1, p.statements(), "one statement for every request that waited");
        assertEquals(32, idsByName(requests).size());
        assertEquals(32, partitionsOf(queue));
        assertEquals(32, partitionsCounted(queue), "each creation counted once");
    }

    @Test
    void concurrentFirstPushesCreateAndCountEachPartitionOnce() throws Exception {
        PartitionProvisioner p = new PartitionProvisioner(database, new QueueCatalog());
        String queue = "prov-race-" + UUID.randomUUID();
        List<List<PushPlan.Group>> requests = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            requests.add(List.of(group(queue, "p" + (i % 50))));
        }
        Map<String, UUID> ids = idsByName(runConcurrently(p, requests));
        assertEquals(50, ids.size());
        assertEquals(50, partitionsOf(queue));
        assertEquals(50, partitionsCounted(queue));
        assertTrue(p.statements() <= 200, "never more statements than requests");

        // Asked again (a fresh catalog, as on another broker): the same ids, nothing created or counted.
        PartitionProvisioner other = new PartitionProvisioner(database, new QueueCatalog());
        List<List<PushPlan.Group>> again = new ArrayList<>();
        for (String name : ids.keySet()) {
            again.add(List.of(group(queue, name)));
        }
        assertEquals(ids, idsByName(runConcurrently(other, again)));
        assertEquals(50, partitionsOf(queue));
        assertEquals(50, partitionsCounted(queue));
    }

    @Test
    void aNamePostgresRefusesFailsOnlyItsOwnRequest() throws Exception {
        PartitionProvisioner p = new PartitionProvisioner(database, new QueueCatalog());
        String queue = "prov-refused-" + UUID.randomUUID();
        StringBuilder noise = new StringBuilder();
        java.util.Random random = new java.util.Random(7);
        while (noise.length() < 9000) {
            noise.append(Long.toString(random.nextLong(), 36));
        }
        String tooLong = noise.toString(); // incompressible, past what a btree entry holds: the insert fails
        List<PushPlan.Group> bad = List.of(group(queue, tooLong));
        List<List<PushPlan.Group>> good = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            good.add(List.of(group(queue, "ok-" + i)));
        }
        // All six wait together and land in one statement, which fails.
        List<Callable<Void>> tasks = new ArrayList<>(good.stream().map(r -> provisioning(p, r)).toList());
        tasks.add(() -> {
            assertThrows(SQLException.class, () -> p.provision(TENANT, bad));
            return null;
        });
        runPiledUp(p, queue, 6, tasks);
        assertEquals(5, idsByName(good).size());
        assertEquals(5, partitionsOf(queue));
        assertEquals(5, partitionsCounted(queue));
    }

    @Test
    void theCatalogHoldsWhatWasProvisioned() throws Exception {
        QueueCatalog catalog = new QueueCatalog();
        PartitionProvisioner p = new PartitionProvisioner(database, catalog);
        String queue = "prov-cache-" + UUID.randomUUID();
        List<PushPlan.Group> request = List.of(group(queue, "a"), group(queue, "b"));
        p.provision(TENANT, request);
        for (PushPlan.Group g : request) {
            assertEquals(g.provisioned, catalog.cached(TENANT, queue, g.partition));
        }
    }

    @Test
    void withoutADatabaseEveryWaitingRequestFailsAndNoneHangs() throws Exception {
        DatabaseSettings gone = TestPostgres.freshDatabase("partition_provisioner_gone");
        Database closed = Database.open(gone);
        closed.close();
        PartitionProvisioner p = new PartitionProvisioner(closed, new QueueCatalog());
        Set<String> failures = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String name = "p" + i;
            tasks.add(() -> {
                SQLException e = assertThrows(SQLException.class,
                        () -> p.provision(TENANT, List.of(group("prov-gone", name))));
                failures.add(name + ": " + e.getMessage());
                return null;
            });
        }
        runAll(tasks, () -> null);
        assertEquals(10, failures.size(), failures.toString());
    }
}
