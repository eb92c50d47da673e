package io.queen.broker.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The streams procedures (007-009) called directly, as any SQL caller would: registration and the
 * grant, the state read's filters and gates, and the cycle's ack and state steps, whose refusals
 * must leave nothing written. Every test works in a tenant or a queue of its own.
 */
class StreamSqlIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final UUID DEFAULT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static Database db;

    @BeforeAll
    static void start() {
        DatabaseSettings settings = TestPostgres.freshDatabase("streams_sql");
        db = Database.open(settings);
        new SchemaApplier(db.dataSource()).apply();
    }

    @AfterAll
    static void stop() {
        db.close();
    }

    // ---------------------------------------------------------------- helpers

    private static StreamStore.Registration register(UUID tenant, String name, String hash, boolean reset)
            throws SQLException {
        try (Connection c = db.connection()) {
            return StreamStore.register(c, tenant, name, "src", "sink", hash, reset);
        }
    }

    private static UUID partition(UUID tenant, String queue, String partition) throws SQLException {
        try (Connection c = db.connection()) {
            return LogStore.provision(c, tenant, queue, partition).partitionId();
        }
    }

    /** Appends {@code n} frames (their bytes are never decoded here). */
    private static void push(UUID partitionId, int n) throws SQLException {
        List<String> txns = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            txns.add(UUID.randomUUID().toString());
        }
        try (Connection c = db.connection()) {
            LogStore.pushOne(c, partitionId, n, new byte[] {1}, TxnHash.concat(txns), null, false, null, null);
        }
    }

    /** Leases up to {@code batch} frames to {@code worker}; returns how many. */
    private static int pop(UUID partitionId, String group, int batch, String worker) throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT coalesce(sum(take), 0) FROM queen.log_pop_v1(?, ?, ?, 30, ?, false, NULL, NULL)")) {
            ps.setObject(1, partitionId);
            ps.setString(2, group);
            ps.setInt(3, batch);
            ps.setString(4, worker);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private record Cursor(long committed, Long batchEnd, String worker) {
    }

    private static Cursor cursor(UUID partitionId, String group) throws SQLException {
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement("SELECT committed, batch_end, worker_id FROM queen.log_consumers"
                     + " WHERE partition_id = ? AND consumer_group = ?")) {
            ps.setObject(1, partitionId);
            ps.setString(2, group);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return new Cursor(rs.getLong(1), rs.getObject(2, Long.class), rs.getString(3));
            }
        }
    }

    private static StreamStore.CycleClose cycle(UUID tenant, UUID query, UUID partitionId, String group, String lease,
                                                Boolean ackOk, long count, boolean release, String ops)
            throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                StreamStore.CycleSource source = StreamStore.openCycle(c, tenant, query, partitionId);
                assertTrue(source.queryFound() && source.partitionFound(), source.toString());
                StreamStore.CycleClose done = StreamStore.closeCycle(c, tenant, query, partitionId, group,
                        ackOk != null, lease, ackOk == null || ackOk, count, release, ops, 2048);
                c.commit();
                return done;
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    private static JsonNode state(UUID tenant, UUID query, UUID partitionId, List<String> keys, String prefix,
                                  Long ripe) throws Exception {
        try (Connection c = db.connection()) {
            StreamStore.StateRows rows = StreamStore.readState(c, tenant, query, partitionId, keys, prefix,
                    ripe == null ? null : java.math.BigDecimal.valueOf(ripe));
            assertEquals("ok", rows.status());
            return MAPPER.readTree(rows.rowsJson());
        }
    }

    private static List<String> keys(JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add(r.get("key").asText()));
        return out;
    }

    private static void sql(String statement, Object... params) throws SQLException {
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(statement)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            ps.execute();
        }
    }

    // ---------------------------------------------------------------- registration

    @Test
    void aQueryRegistersFreshThenAsExistingAndAChangedHashNeedsReset() throws Exception {
        StreamStore.Registration fresh = register(DEFAULT, "reg.q", "h1", false);
        assertEquals("fresh", fresh.outcome());
        assertNotNull(fresh.queryId());
        StreamStore.Registration again = register(DEFAULT, "reg.q", "h1", true);
        assertEquals("existing", again.outcome(), "a matching hash never resets, even when asked");
        assertEquals(fresh.queryId(), again.queryId());

        UUID p = partition(DEFAULT, "reg_src", "p");
        cycle(DEFAULT, fresh.queryId(), p, "g", null, null, 0, true, "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":1}]");
        StreamStore.Registration mismatch = register(DEFAULT, "reg.q", "h2", false);
        assertEquals("mismatch", mismatch.outcome());
        assertEquals(fresh.queryId(), mismatch.queryId());
        assertTrue(mismatch.detail().startsWith("config_hash mismatch"), mismatch.detail());
        assertEquals(1, state(DEFAULT, fresh.queryId(), p, List.of(), null, null).size(), "a mismatch writes nothing");

        StreamStore.Registration reset = register(DEFAULT, "reg.q", "h2", true);
        assertEquals("reset", reset.outcome());
        assertEquals(fresh.queryId(), reset.queryId(), "the id survives a reset");
        assertEquals(0, state(DEFAULT, fresh.queryId(), p, List.of(), null, null).size(), "the reset wiped the state");
        assertEquals("existing", register(DEFAULT, "reg.q", "h2", false).outcome(), "the new hash is stored");
    }

    @Test
    void anotherTenantNeedsAnEnabledGrantForNewNamesOnlyAndItsCapHolds() throws Exception {
        UUID tenant = UUID.randomUUID();
        StreamStore.Registration none = register(tenant, "grant.q1", "h", false);
        assertEquals("denied", none.outcome());
        assertEquals("streams not granted for this tenant", none.detail());

        sql("INSERT INTO queen_streams.quota (tenant_id, enabled, max_queries) VALUES (?, false, NULL)", tenant);
        assertEquals("denied", register(tenant, "grant.q1", "h", false).outcome(), "a disabled grant denies");

        sql("UPDATE queen_streams.quota SET enabled = true, max_queries = 1 WHERE tenant_id = ?", tenant);
        StreamStore.Registration first = register(tenant, "grant.q1", "h", false);
        assertEquals("fresh", first.outcome());
        StreamStore.Registration second = register(tenant, "grant.q2", "h", false);
        assertEquals("denied", second.outcome());
        assertEquals("streams query quota exceeded (max 1)", second.detail());

        sql("UPDATE queen_streams.quota SET enabled = false WHERE tenant_id = ?", tenant);
        assertEquals("existing", register(tenant, "grant.q1", "h", false).outcome(), "a running query keeps running");
        assertEquals("reset", register(tenant, "grant.q1", "h2", true).outcome());

        assertEquals("fresh", register(DEFAULT, "grant.q2", "h", false).outcome(), "the default tenant needs no row");
        assertEquals("denied", register(UUID.randomUUID(), "grant.q1", "h", false).outcome(),
                "another tenant's grant is not this one's");
    }

    // ---------------------------------------------------------------- state reads

    @Test
    void stateReadsFilterByKeysLiteralPrefixAndRipenessInByteOrder() throws Exception {
        UUID q = register(DEFAULT, "read.q", "h", false).queryId();
        UUID p = partition(DEFAULT, "read_src", "p");
        cycle(DEFAULT, q, p, "g", null, null, 0, true, "["
                + "{\"type\":\"upsert\",\"key\":\"t_1\\u001fw1\",\"value\":{\"windowEnd\":100}},"
                + "{\"type\":\"upsert\",\"key\":\"tx1\\u001fw2\",\"value\":{\"windowEnd\":200.5}},"
                + "{\"type\":\"upsert\",\"key\":\"t_1\\u001fw3\",\"value\":{\"windowEnd\":\"300\"}},"
                + "{\"type\":\"upsert\",\"key\":\"B\",\"value\":7},"
                + "{\"type\":\"upsert\",\"key\":\"a\",\"value\":[1]}]");
        assertEquals(List.of("B", "a", "t_1\u001fw1", "t_1\u001fw3", "tx1\u001fw2"),
                keys(state(DEFAULT, q, p, List.of(), null, null)), "every row, in byte order");
        assertEquals(List.of("B", "a"), keys(state(DEFAULT, q, p, List.of("a", "B", "nope"), null, null)));
        assertEquals(List.of("t_1\u001fw1", "t_1\u001fw3"), keys(state(DEFAULT, q, p, List.of(), "t_1", null)),
                "the prefix is literal: _ is no wildcard");
        assertEquals(List.of("t_1\u001fw1", "tx1\u001fw2"), keys(state(DEFAULT, q, p, List.of(), null, 250L)),
                "ripe: a numeric windowEnd at or before the bound; a string one is never ripe");
        assertEquals(List.of("t_1\u001fw1"), keys(state(DEFAULT, q, p, List.of(), "t", 150L)));
        JsonNode row = state(DEFAULT, q, p, List.of("a"), null, null).get(0);
        assertEquals("[1]", row.get("value").toString());
        assertTrue(row.get("updated_at").isTextual(), row.toString());
    }

    @Test
    void aForeignPartitionOrQueryReadsAsNotFound() throws Exception {
        UUID tenant = UUID.randomUUID();
        sql("INSERT INTO queen_streams.quota (tenant_id) VALUES (?)", tenant);
        UUID q = register(DEFAULT, "foreign.q", "h", false).queryId();
        UUID p = partition(DEFAULT, "foreign_src", "p");
        UUID theirs = partition(tenant, "foreign_src", "p");
        UUID theirQuery = register(tenant, "foreign.q", "h", false).queryId();
        try (Connection c = db.connection()) {
            assertEquals("partition_not_found",
                    StreamStore.readState(c, DEFAULT, q, theirs, List.of(), null, null).status());
            assertEquals("partition_not_found",
                    StreamStore.readState(c, DEFAULT, q, UUID.randomUUID(), List.of(), null, null).status());
            assertEquals("query_not_found",
                    StreamStore.readState(c, DEFAULT, theirQuery, p, List.of(), null, null).status());
            assertEquals("ok", StreamStore.readState(c, tenant, theirQuery, theirs, List.of(), null, null).status());
            c.setAutoCommit(false);
            StreamStore.CycleSource mine = StreamStore.openCycle(c, DEFAULT, q, p);
            assertTrue(mine.queryFound() && mine.partitionFound());
            assertEquals("foreign_src", mine.queueName());
            assertEquals("p", mine.partitionName());
            StreamStore.CycleSource foreign = StreamStore.openCycle(c, DEFAULT, theirQuery, theirs);
            assertFalse(foreign.queryFound());
            assertFalse(foreign.partitionFound());
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    // ---------------------------------------------------------------- the cycle

    @Test
    void aFullAckMovesTheCursorToTheBatchEndAndReleasesTheLease() throws Exception {
        UUID q = register(DEFAULT, "ack.full", "h", false).queryId();
        UUID p = partition(DEFAULT, "ack_full", "p");
        push(p, 5);
        assertEquals(3, pop(p, "g", 3, "lease-1"));
        StreamStore.CycleClose done = cycle(DEFAULT, q, p, "g", "lease-1", true, 3, true,
                "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":{\"n\":3}}]");
        assertEquals(3, done.ackCount());
        assertTrue(done.leaseReleased());
        assertTrue(done.more(), "two messages wait behind the cursor");
        assertEquals(1, done.stateOpsApplied());
        Cursor cur = cursor(p, "g");
        assertEquals(2, cur.committed());
        assertEquals(null, cur.batchEnd());
        assertEquals(null, cur.worker());

        assertEquals(2, pop(p, "g", 10, "lease-2"));
        assertFalse(cycle(DEFAULT, q, p, "g", "lease-2", true, 2, true, "[]").more(), "nothing waits any more");
    }

    @Test
    void aNackReleasesTheLeaseAndKeepsTheCursor() throws Exception {
        UUID q = register(DEFAULT, "ack.nack", "h", false).queryId();
        UUID p = partition(DEFAULT, "ack_nack", "p");
        push(p, 2);
        pop(p, "g", 2, "lease-n");
        StreamStore.CycleClose done = cycle(DEFAULT, q, p, "g", "lease-n", false, 2, true, "[]");
        assertEquals(0, done.ackCount());
        assertTrue(done.leaseReleased());
        assertTrue(done.more());
        Cursor cur = cursor(p, "g");
        assertEquals(-1, cur.committed());
        assertEquals(null, cur.worker());
        assertEquals(2, pop(p, "g", 2, "lease-again"), "the batch is delivered again");
    }

    @Test
    void aPartialAckMovesKAndKeepsTheLeaseOnTheTail() throws Exception {
        UUID q = register(DEFAULT, "ack.partial", "h", false).queryId();
        UUID p = partition(DEFAULT, "ack_partial", "p");
        push(p, 4);
        pop(p, "g", 4, "lease-p");
        StreamStore.CycleClose done = cycle(DEFAULT, q, p, "g", "lease-p", true, 2, false, "[]");
        assertFalse(done.leaseReleased());
        Cursor cur = cursor(p, "g");
        assertEquals(1, cur.committed());
        assertEquals(3L, cur.batchEnd());
        assertEquals("lease-p", cur.worker());
        cycle(DEFAULT, q, p, "g", "lease-p", true, 9, false, "[]");
        assertEquals(3, cursor(p, "g").committed(), "never past the lease's batch end");
    }

    @Test
    void aStaleLeaseOrABadOperationRaisesAndWritesNothing() throws Exception {
        UUID q = register(DEFAULT, "ack.stale", "h", false).queryId();
        UUID p = partition(DEFAULT, "ack_stale", "p");
        push(p, 2);
        pop(p, "g", 2, "lease-s");
        cycle(DEFAULT, q, p, "g", null, null, 0, true, "[{\"type\":\"upsert\",\"key\":\"kept\",\"value\":1}]");
        String ops = "[{\"type\":\"delete\",\"key\":\"kept\"},{\"type\":\"upsert\",\"key\":\"new\",\"value\":2}]";

        PSQLException stale = assertThrows(PSQLException.class,
                () -> cycle(DEFAULT, q, p, "g", "another-lease", true, 2, true, ops));
        assertEquals("streams_lease_invalid", stale.getServerErrorMessage().getMessage());
        assertEquals(new StreamStore.Raised("streams_lease_invalid", null), StreamStore.raised(stale));
        PSQLException noCursor = assertThrows(PSQLException.class,
                () -> cycle(DEFAULT, q, p, "other-group", "lease-s", true, 2, true, ops));
        assertEquals("streams_lease_invalid", noCursor.getServerErrorMessage().getMessage());
        sql("UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = ?", p);
        PSQLException expired = assertThrows(PSQLException.class,
                () -> cycle(DEFAULT, q, p, "g", "lease-s", true, 2, true, ops));
        assertEquals("streams_lease_invalid", expired.getServerErrorMessage().getMessage());
        sql("UPDATE queen.log_consumers SET lease_expires_at = now() + interval '30 seconds' WHERE partition_id = ?", p);

        PSQLException bad = assertThrows(PSQLException.class, () -> cycle(DEFAULT, q, p, "g", "lease-s", true, 2, true,
                "[{\"type\":\"delete\",\"key\":\"kept\"},{\"type\":\"merge\",\"key\":\"x\"}]"));
        assertEquals("22023", bad.getSQLState());
        assertEquals(new StreamStore.Raised("streams_bad_state_op", "Unknown state_op type: merge"),
                StreamStore.raised(bad));
        PSQLException noKey = assertThrows(PSQLException.class, () -> cycle(DEFAULT, q, p, "g", "lease-s", true, 2,
                true, "[{\"type\":\"upsert\",\"value\":1}]"));
        assertEquals("streams_bad_state_op", StreamStore.raised(noKey).identifier());
        PSQLException longKey = assertThrows(PSQLException.class, () -> cycle(DEFAULT, q, p, "g", "lease-s", true, 2,
                true, "[{\"type\":\"upsert\",\"key\":\"" + "k".repeat(2049) + "\",\"value\":1}]"));
        assertEquals("streams_state_key_too_large", StreamStore.raised(longKey).identifier());

        assertEquals(List.of("kept"), keys(state(DEFAULT, q, p, List.of(), null, null)), "no state written");
        Cursor cur = cursor(p, "g");
        assertEquals(-1, cur.committed(), "no ack written");
        assertEquals("lease-s", cur.worker());
    }

    @Test
    void theLastOperationOnAKeyWinsAndAnIdleFlushTouchesNoCursor() throws Exception {
        UUID q = register(DEFAULT, "ops.order", "h", false).queryId();
        UUID p = partition(DEFAULT, "ops_order", "p");
        StreamStore.CycleClose done = cycle(DEFAULT, q, p, "g", null, null, 0, true, "["
                + "{\"type\":\"upsert\",\"key\":\"a\",\"value\":1},"
                + "{\"type\":\"delete\",\"key\":\"a\"},"
                + "{\"type\":\"upsert\",\"key\":\"b\",\"value\":1},"
                + "{\"type\":\"upsert\",\"key\":\"b\",\"value\":2},"
                + "{\"type\":\"upsert\",\"key\":\"c\"},"
                + "{\"type\":\"delete\",\"key\":\"never-there\"}]");
        assertEquals(6, done.stateOpsApplied());
        assertFalse(done.leaseReleased());
        JsonNode rows = state(DEFAULT, q, p, List.of(), null, null);
        assertEquals(List.of("b", "c"), keys(rows));
        assertEquals(2, rows.get(0).get("value").asInt());
        assertEquals("{}", rows.get(1).get("value").toString(), "an upsert without a value stores {}");
    }

    @Test
    void aTenantPurgeStepsOverTheQueueOfACycleInFlightInsteadOfWaitingAndCleansUpAfter() throws Exception {
        UUID tenant = UUID.randomUUID();
        sql("INSERT INTO queen_streams.quota (tenant_id) VALUES (?)", tenant);
        UUID q = register(tenant, "purge.q", "h", false).queryId();
        UUID p = partition(tenant, "purge_src", "p");
        cycle(tenant, q, p, "g", null, null, 0, true, "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":1}]");
        try (Connection inFlight = db.connection(); Connection purger = db.connection()) {
            inFlight.setAutoCommit(false);
            assertTrue(StreamStore.openCycle(inFlight, tenant, q, p).partitionFound());
            try (PreparedStatement ps = purger.prepareStatement(
                    "SELECT queen.delete_tenant_data_v1(?, 10, 1000)::text")) {
                purger.createStatement().execute("SET statement_timeout = '5s'");
                ps.setObject(1, tenant);
                JsonNode step = purge(ps);
                assertFalse(step.get("done").asBoolean(), step.toString());
                assertEquals(1, step.get("queues").get("remaining").asInt(), "the queue a cycle holds is left");
                assertEquals(0, step.get("rows").get("queen_streams.state").asInt(), "and so is its state");
                inFlight.commit();
                JsonNode last = purge(ps);
                for (int i = 0; i < 5 && !last.get("done").asBoolean(); i++) {
                    last = purge(ps);
                }
                assertTrue(last.get("done").asBoolean(), last.toString());
            }
        }
        for (String table : List.of("queen_streams.queries", "queen_streams.quota")) {
            try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM " + table + " WHERE tenant_id = ?")) {
                ps.setObject(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertEquals(0, rs.getLong(1), table);
                }
            }
        }
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM queen_streams.state WHERE query_id = ?")) {
            ps.setObject(1, q);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertEquals(0, rs.getLong(1));
            }
        }
    }

    private static JsonNode purge(PreparedStatement ps) throws Exception {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return MAPPER.readTree(rs.getString(1));
        }
    }

    @Test
    void aQueueDeleteRemovesTheStateOfItsPartitions() throws Exception {
        UUID q = register(DEFAULT, "delete.q", "h", false).queryId();
        UUID gone = partition(DEFAULT, "delete_src", "p");
        UUID kept = partition(DEFAULT, "delete_other", "p");
        String ops = "[{\"type\":\"upsert\",\"key\":\"k\",\"value\":1}]";
        cycle(DEFAULT, q, gone, "g", null, null, 0, true, ops);
        cycle(DEFAULT, q, kept, "g", null, null, 0, true, ops);
        sql("SELECT queen.delete_queue_v1('delete_src', ?)", DEFAULT);
        try (Connection c = db.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT partition_id FROM queen_streams.state WHERE query_id = ?")) {
            ps.setObject(1, q);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                assertEquals(kept, rs.getObject(1, UUID.class));
                assertFalse(rs.next());
            }
        }
    }
}
