package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SchemaApplyIT {
    private final List<Database> open = new ArrayList<>();

    @AfterEach
    void closePools() {
        open.forEach(Database::close);
    }

    private Database fresh(String purpose) {
        DatabaseSettings s = TestPostgres.freshDatabase(purpose);
        Database db = Database.open(s);
        open.add(db);
        return db;
    }

    private static SchemaApplier applier(Database db, SchemaApplier.Options options) {
        return new SchemaApplier(db.dataSource(), options, SchemaFiles::load);
    }

    @Test
    void aFreshApplyCreatesTheTablesWithTheirKeysAndStorageParameters() throws SQLException {
        Database db = fresh("fresh_apply");
        SchemaApplier.Result result = new SchemaApplier(db.dataSource()).apply();
        assertEquals(34, result.files());
        assertTrue(result.statements() > 0);

        try (Connection c = db.connection()) {
            for (String table : List.of("queues", "log_partitions", "log_segments", "log_txns", "log_consumers",
                    "log_dlq", "hotlist_repairs", "consumer_groups_metadata", "consumer_watermarks", "maintenance_leases")) {
                assertTrue(exists(c, "SELECT 1 FROM pg_tables WHERE schemaname = 'queen' AND tablename = '" + table + "'"),
                        "table queen." + table);
            }
            assertTrue(single(c, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'queen' AND indexname = 'cgm_identity_uk'")
                    .contains("NULLS NOT DISTINCT"));
            assertTrue(single(c, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'queen' AND indexname = 'queues_tenant_name_uk'")
                    .contains("(tenant_id, name)"));
            String partitionOptions = single(c, "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'queen.log_partitions'::regclass");
            for (String opt : List.of("fillfactor=70", "autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=500",
                    "autovacuum_vacuum_cost_delay=0")) {
                assertTrue(partitionOptions.contains(opt), opt + " in " + partitionOptions);
            }
            assertTrue(partitionOptions.matches(".*vacuum_truncate=(off|false).*"), partitionOptions);
            assertTrue(single(c, "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'queen.log_consumers'::regclass")
                    .contains("fillfactor=50"));
            assertEquals("e", single(c, "SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'queen.log_segments'::regclass AND attname = 'blob'"));
            assertTrue(exists(c, "SELECT 1 FROM pg_indexes WHERE schemaname = 'queen' AND indexname = 'idx_log_partitions_queue_write'"));
            assertTrue(exists(c, "SELECT 1 FROM pg_indexes WHERE schemaname = 'queen' AND indexname = 'idx_log_dlq_partition_failed_at'"));
            // log_txns deliberately has no foreign key; log_consumers cascades from its partition.
            assertFalse(exists(c, "SELECT 1 FROM pg_constraint WHERE conrelid = 'queen.log_txns'::regclass AND contype = 'f'"));
            assertTrue(single(c, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'queen.log_consumers'::regclass AND contype = 'f'")
                    .contains("ON DELETE CASCADE"));
        }
    }

    @Test
    void reApplyingIsANoOpThatLeavesTheCatalogUnchanged() throws SQLException {
        Database db = fresh("reapply");
        new SchemaApplier(db.dataSource()).apply();
        String before = catalog(db);
        new SchemaApplier(db.dataSource()).apply();
        assertEquals(before, catalog(db));
    }

    @Test
    void twoAppliersStartingTogetherBothSucceedOneAfterTheOther() throws Exception {
        DatabaseSettings s = TestPostgres.freshDatabase("concurrent_boot");
        Database a = Database.open(s);
        Database b = Database.open(s);
        open.add(a);
        open.add(b);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService twoThreads = Executors.newFixedThreadPool(2);
        var first = CompletableFuture.supplyAsync(() -> await(go, () -> new SchemaApplier(a.dataSource()).apply()), twoThreads);
        var second = CompletableFuture.supplyAsync(() -> await(go, () -> new SchemaApplier(b.dataSource()).apply()), twoThreads);
        go.countDown();
        SchemaApplier.Result r1 = first.get(120, TimeUnit.SECONDS);
        SchemaApplier.Result r2 = second.get(120, TimeUnit.SECONDS);
        twoThreads.shutdown();
        assertEquals(r1.statements(), r2.statements());
        // One of them found the advisory lock taken and polled until the other was done.
        assertTrue(Math.max(r1.waitedForLockMs(), r2.waitedForLockMs()) >= 400,
                "waited " + r1.waitedForLockMs() + " and " + r2.waitedForLockMs());
        try (Connection c = a.connection()) {
            assertTrue(exists(c, "SELECT 1 FROM pg_tables WHERE schemaname = 'queen' AND tablename = 'log_segments'"));
        }
    }

    @Test
    void aConflictingLockIsRetriedUntilItIsReleased() throws Exception {
        Database db = fresh("lock_retry");
        new SchemaApplier(db.dataSource()).apply();
        SchemaApplier.Options patient = SchemaApplier.Options.defaults()
                .withLockTimeout(Duration.ofMillis(200)).withMaxAttempts(40);
        try (Connection holder = TestPostgres.connect(db.settings())) {
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("LOCK TABLE queen.log_partitions IN ACCESS EXCLUSIVE MODE");
            }
            var apply = CompletableFuture.supplyAsync(() -> applier(db, patient).apply());
            Awaitility.await("the apply queues for the lock").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10)).until(() -> waitsForTheLock(db));
            Awaitility.await("the apply must wait for the lock, not skip the statement: it stays unfinished")
                    .during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> !apply.isDone());
            holder.commit();
            SchemaApplier.Result r = apply.get(60, TimeUnit.SECONDS);
            assertTrue(r.retries() > 0, "retries " + r.retries());
        }
    }

    /** Whether a session of this database waits for a lock on queen.log_partitions right now. */
    private static boolean waitsForTheLock(Database db) throws SQLException {
        try (Connection c = TestPostgres.connect(db.settings()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                     + " WHERE d.datname = current_database() AND NOT l.granted"
                     + " AND l.relation = 'queen.log_partitions'::regclass")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    @Test
    void exhaustedPatienceFailsWithTheFileStatementErrorAndLockHolders() throws Exception {
        Database db = fresh("lock_fail");
        new SchemaApplier(db.dataSource()).apply();
        SchemaApplier.Options impatient = SchemaApplier.Options.defaults()
                .withLockTimeout(Duration.ofMillis(100)).withMaxAttempts(3);
        try (Connection holder = TestPostgres.connect(db.settings())) {
            holder.setAutoCommit(false);
            int holderPid;
            try (Statement st = holder.createStatement()) {
                st.execute("SET application_name = 'lock-hog'");
                st.execute("LOCK TABLE queen.log_partitions IN ACCESS EXCLUSIVE MODE");
                try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                    rs.next();
                    holderPid = rs.getInt(1);
                }
            }
            SchemaApplyException e = assertThrows(SchemaApplyException.class, () -> applier(db, impatient).apply());
            String m = e.getMessage();
            assertTrue(m.contains("procedures/001_log_schema.sql"), m);
            assertTrue(m.contains("at statement "), m);
            assertTrue(m.contains("after 3 attempts"), m);
            assertTrue(m.contains("55P03"), m);
            assertTrue(m.contains("pid " + holderPid), m);
            assertTrue(m.contains("lock-hog"), m);
            holder.rollback();
        }
        // The failed apply released its advisory lock: a new apply proceeds at once.
        assertTrue(new SchemaApplier(db.dataSource()).apply().waitedForLockMs() < 400);
    }

    @Test
    void aServerOlderThanRequiredIsRefusedBeforeAnyDdl() throws SQLException {
        Database db = fresh("version_refusal");
        SchemaApplier.Options future = SchemaApplier.Options.defaults().withMinServerVersionNum(990000);
        SchemaApplyException e = assertThrows(SchemaApplyException.class, () -> applier(db, future).apply());
        assertTrue(e.getMessage().contains("PostgreSQL 99 or newer is required"), e.getMessage());
        assertTrue(e.getMessage().contains("the server runs "), e.getMessage());
        try (Connection c = db.connection()) {
            assertFalse(exists(c, "SELECT 1 FROM pg_namespace WHERE nspname = 'queen'"));
        }
    }

    @Test
    void anInvalidStatementStopsTheApplyNamingFileAndOrdinal() {
        Database db = fresh("bad_statement");
        var files = List.of(new SchemaFiles.SchemaFile("schema.sql", "CREATE SCHEMA IF NOT EXISTS queen;"),
                new SchemaFiles.SchemaFile("procedures/001_broken.sql", "SELECT 1;\nCREATE TABLE queen.t (x nosuchtype);"));
        SchemaApplyException e = assertThrows(SchemaApplyException.class,
                () -> new SchemaApplier(db.dataSource(), SchemaApplier.Options.defaults(), () -> files).apply());
        assertTrue(e.getMessage().contains("procedures/001_broken.sql at statement 2"), e.getMessage());
        assertTrue(e.getMessage().contains("nosuchtype"), e.getMessage());
    }

    @Test
    void aRunOfDropsCommitsTogetherWithTheStatementAfterIt() throws SQLException {
        Database db = fresh("drop_group");
        var setup = List.of(new SchemaFiles.SchemaFile("schema.sql",
                "CREATE SCHEMA IF NOT EXISTS queen; CREATE TABLE queen.keep (x int); CREATE TABLE queen.gone (x int);"));
        new SchemaApplier(db.dataSource(), SchemaApplier.Options.defaults(), () -> setup).apply();
        // The drop is followed by a failing statement: grouped, the drop must roll back with it.
        var broken = List.of(new SchemaFiles.SchemaFile("schema.sql",
                "DROP TABLE queen.gone; CREATE TABLE queen.keep (x int);"));
        assertThrows(SchemaApplyException.class,
                () -> new SchemaApplier(db.dataSource(), SchemaApplier.Options.defaults(), () -> broken).apply());
        try (Connection c = db.connection()) {
            assertTrue(exists(c, "SELECT 1 FROM pg_tables WHERE schemaname = 'queen' AND tablename = 'gone'"));
        }
    }

    private static <T> T await(CountDownLatch latch, java.util.function.Supplier<T> task) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return task.get();
    }

    /** Everything a re-apply could change: tables (by oid), columns, constraints, indexes, options, functions, triggers. */
    private static String catalog(Database db) throws SQLException {
        String sql = """
                SELECT 'rel ' || c.oid || ' ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '')
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'queen'
                UNION ALL
                SELECT 'col ' || a.attrelid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                       || ' ' || a.attnotnull || ' ' || a.attstorage::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE n.nspname = 'queen' AND a.attnum > 0 AND NOT a.attisdropped
                UNION ALL
                SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
                FROM pg_constraint WHERE connamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'queen')
                UNION ALL
                SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'queen'
                UNION ALL
                SELECT 'fn ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || md5(pg_get_functiondef(p.oid))
                FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'queen' AND p.prokind IN ('f', 'p')
                UNION ALL
                SELECT 'trg ' || t.oid || ' ' || pg_get_triggerdef(t.oid)
                FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'queen' AND NOT t.tgisinternal
                ORDER BY 1
                """;
        StringBuilder out = new StringBuilder();
        try (Connection c = db.connection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.append(rs.getString(1)).append('\n');
            }
        }
        return out.toString();
    }

    private static boolean exists(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next();
        }
    }

    private static String single(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertTrue(rs.next(), "no row for " + sql);
            return rs.getString(1);
        }
    }
}
