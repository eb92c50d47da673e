package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.Broker;
import io.queen.broker.config.BrokerSettings;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.config.Env;
import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.store.SchemaApplier;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tenant purge route as the operator's finalizer drives it: small budgets, one step per call,
 * until done; afterwards no table of the queen schemas holds a row of the tenant, and another
 * tenant with the same queue names (and the default tenant) is untouched.
 */
class TenantPurgeIT {
    static final String GONE = "0a0a0a0a-0000-4000-8000-00000000000a";
    static final String KEPT = "0b0b0b0b-0000-4000-8000-00000000000b";
    static final String DEFAULT = "00000000-0000-0000-0000-000000000001";
    static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path spool;
    static DatabaseSettings db;
    static Broker broker;
    static final HttpClient CLIENT = HttpClient.newHttpClient();

    record Reply(int status, JsonNode json) {
    }

    /** What a tenant owns, by the ids its rows are reachable from. */
    record Ids(UUID tenant, UUID[] queues, UUID[] partitions, UUID[] traces, UUID[] queries) {
    }

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("tenant_purge");
        Env env = new Env(Map.of("PG_HOST", db.host(), "PORT", "0", "DB_POOL_SIZE", "8",
                "QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "FILE_BUFFER_DIR", spool.toString()));
        broker = Broker.start(BrokerSettings.from(env).withDatabase(db), SchemaApplier.Options.defaults(),
                MaintenanceSettings.from(env));
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply call(String method, String path, String tenant, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.port() + path))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (tenant != null) {
            b.header("x-queen-tenant", tenant);
        }
        try {
            HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body().isEmpty() ? null : MAPPER.readTree(r.body()));
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static Reply purge(String tenant, String body) {
        // The route is cell-wide: a tenant header on the call changes nothing.
        return call("POST", "/api/v1/system/tenants/" + tenant + "/purge", KEPT, body);
    }

    /** Queues with two partitions each, a consumer group that popped and acked, over HTTP as the tenant. */
    static void fillThroughHttp(String tenant, List<String> queues) {
        for (String q : queues) {
            StringBuilder items = new StringBuilder();
            for (int i = 0; i < 4; i++) {
                items.append(i == 0 ? "" : ",").append("{\"queue\":\"").append(q).append("\",\"partition\":\"p")
                        .append(i % 2).append("\",\"payload\":{\"i\":").append(i).append("},\"transactionId\":\"")
                        .append(q).append('-').append(i).append("\"}");
            }
            assertEquals(201, call("POST", "/api/v1/push", tenant, "{\"items\":[" + items + "]}").status());
            Reply popped = call("GET", "/api/v1/pop/queue/" + q + "?batch=1&consumerGroup=g&subscriptionMode=all", tenant, null);
            assertEquals(200, popped.status());
            JsonNode m = popped.json().get("messages").get(0);
            assertEquals(200, call("POST", "/api/v1/ack", tenant, "{\"transactionId\":\"" + m.get("transactionId").asText()
                    + "\",\"partitionId\":\"" + m.get("partitionId").asText() + "\",\"leaseId\":\""
                    + m.get("leaseId").asText() + "\",\"consumerGroup\":\"g\"}").status());
            assertEquals(200, call("GET", "/api/v1/pop/queue/" + q + "?batch=1", tenant, null).status());
        }
    }

    /** Rows in every other table a tenant can own, written directly. */
    static void fillDirectly(Connection c, String t) throws SQLException {
        String tenant = "'" + t + "'::uuid";
        String partitions = "(SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.tenant_id = " + tenant + ")";
        String queues = "(SELECT id FROM queen.queues WHERE tenant_id = " + tenant + ")";
        try (Statement st = c.createStatement()) {
            st.execute("INSERT INTO queen.message_traces (partition_id, transaction_id, event_type, data)"
                    + " SELECT p, 'tx-' || n, 'info', '{}'::jsonb FROM " + partitions + " ps(p), generate_series(1, 3) n");
            st.execute("INSERT INTO queen.message_trace_names (trace_id, trace_name)"
                    + " SELECT t.id, nm FROM queen.message_traces t, unnest(ARRAY['a', 'b']) nm"
                    + " WHERE t.partition_id IN " + partitions);
            st.execute("INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type)"
                    + " SELECT p, n, 'retention' FROM " + partitions + " ps(p), generate_series(1, 3) n");
            st.execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", transaction_id, payload)"
                    + " SELECT p, 'g', 0, 'dead', '{}'::jsonb FROM " + partitions + " ps(p)");
            st.execute("INSERT INTO queen_streams.queries (name, source_queue, config_hash, tenant_id)"
                    + " VALUES ('agg-" + t + "', 'q1', 'h', " + tenant + ")");
            st.execute("INSERT INTO queen_streams.state (query_id, partition_id, key, value)"
                    + " SELECT qy.id, p, 'k' || n, '1'::jsonb FROM queen_streams.queries qy, " + partitions
                    + " ps(p), generate_series(1, 2) n WHERE qy.tenant_id = " + tenant);
            // State of a partition already gone: reachable through the tenant's query only.
            st.execute("INSERT INTO queen_streams.state (query_id, partition_id, key, value)"
                    + " SELECT id, gen_random_uuid(), 'orphan', '1'::jsonb FROM queen_streams.queries WHERE tenant_id = " + tenant);
            st.execute("INSERT INTO queen_streams.quota (tenant_id) VALUES (" + tenant + ") ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.stats (stat_type, stat_key, queue_id)"
                    + " SELECT 'queue', 'queue:' || id, id FROM " + queues + " qs(id) ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.queue_lag_metrics (bucket_time, queue_id)"
                    + " SELECT date_trunc('minute', now()) - interval '1 hour', id FROM " + queues + " qs(id)");
            st.execute("INSERT INTO queen.consumer_watermarks (queue_id, consumer_group)"
                    + " SELECT id, 'wm' FROM " + queues + " qs(id) ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                    + " SELECT " + tenant + ", 'q1', 'timer-' || n, now() + interval '1 day', 'tt-' || n,"
                    + " gen_random_uuid(), '\\x7b7d'::bytea FROM generate_series(1, 3) n");
            st.execute("INSERT INTO queen.kv (tenant_id, namespace, key, value, version)"
                    + " SELECT " + tenant + ", 'ns', 'key-' || n, '1'::jsonb, nextval('queen.kv_version_seq')"
                    + " FROM generate_series(1, 3) n");
            st.execute("INSERT INTO queen.kv_quota (tenant_id) VALUES (" + tenant + ") ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.kv_usage (tenant_id) VALUES (" + tenant + ") ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.hotlist_repairs (tenant_id, queue_name, consumer_group, reason)"
                    + " VALUES (" + tenant + ", 'q1', 'g', 'seek'), (" + tenant + ", 'q2', 'g', 'seek') ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.queue_parked_replica (bucket_time, queue_name, hostname, worker_id, tenant_id)"
                    + " VALUES (now() - interval '1 hour', 'q1', 'test-host', 1, " + tenant + "),"
                    + " (now() - interval '1 hour', 'q2', 'test-host', 1, " + tenant + ")");
            st.execute("INSERT INTO queen.ephemeral_queues (tenant_id, queue) VALUES (" + tenant + ", 'e1'), ("
                    + tenant + ", 'e2')");
            st.execute("INSERT INTO queen.ephemeral_quota (tenant_id) VALUES (" + tenant + ") ON CONFLICT DO NOTHING");
            st.execute("INSERT INTO queen.consumer_groups_metadata (tenant_id, consumer_group, namespace,"
                    + " subscription_mode, subscription_timestamp) VALUES (" + tenant + ", 'discover', 'q', 'all', now())");
        }
    }

    static Ids ids(Connection c, String t) throws SQLException {
        UUID tenant = UUID.fromString(t);
        return new Ids(tenant,
                uuids(c, "SELECT id FROM queen.queues WHERE tenant_id = ?", tenant),
                uuids(c, "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                        + " WHERE q.tenant_id = ?", tenant),
                uuids(c, "SELECT t.id FROM queen.message_traces t JOIN queen.log_partitions p ON p.id = t.partition_id"
                        + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = ?", tenant),
                uuids(c, "SELECT id FROM queen_streams.queries WHERE tenant_id = ?", tenant));
    }

    static UUID[] uuids(Connection c, String sql, UUID tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, tenant);
            List<UUID> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getObject(1, UUID.class));
                }
            }
            return out.toArray(UUID[]::new);
        }
    }

    /**
     * Rows of every table of the queen schemas that belong to the tenant, by whichever owner column
     * the table has (tenant, queue, partition, trace or streaming query); tables with none are
     * cell-wide and not counted.
     */
    static Map<String, Long> owned(Connection c, Ids ids) throws SQLException {
        Map<String, Set<String>> columns = new LinkedHashMap<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT n.nspname || '.' || cl.relname, a.attname FROM pg_attribute a"
                        + " JOIN pg_class cl ON cl.oid = a.attrelid JOIN pg_namespace n ON n.oid = cl.relnamespace"
                        + " WHERE n.nspname IN ('queen', 'queen_streams') AND cl.relkind IN ('r', 'p')"
                        + " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2")) {
            while (rs.next()) {
                columns.computeIfAbsent(rs.getString(1), k -> new LinkedHashSet<>()).add(rs.getString(2));
            }
        }
        Map<String, Long> out = new LinkedHashMap<>();
        for (var e : columns.entrySet()) {
            String table = e.getKey();
            Set<String> cols = e.getValue();
            List<String> where = new ArrayList<>();
            List<Object> binds = new ArrayList<>();
            if (cols.contains("tenant_id")) {
                where.add("tenant_id = ?");
                binds.add(ids.tenant());
            }
            addAny(c, where, binds, cols, "queue_id", ids.queues());
            addAny(c, where, binds, cols, "partition_id", ids.partitions());
            addAny(c, where, binds, cols, "trace_id", ids.traces());
            addAny(c, where, binds, cols, "query_id", ids.queries());
            switch (table) {
                case "queen.queues" -> addAny(c, where, binds, cols, "id", ids.queues());
                case "queen.log_partitions" -> addAny(c, where, binds, cols, "id", ids.partitions());
                case "queen.message_traces" -> addAny(c, where, binds, cols, "id", ids.traces());
                case "queen_streams.queries" -> addAny(c, where, binds, cols, "id", ids.queries());
                default -> { }
            }
            if (where.isEmpty()) {
                continue;
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM " + table + " WHERE " + String.join(" OR ", where))) {
                for (int i = 0; i < binds.size(); i++) {
                    ps.setObject(i + 1, binds.get(i));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    out.put(table, rs.getLong(1));
                }
            }
        }
        return out;
    }

    private static void addAny(Connection c, List<String> where, List<Object> binds, Set<String> cols, String col,
                               UUID[] values) throws SQLException {
        if (cols.contains(col)) {
            where.add(col + " = ANY (?)");
            Array a = c.createArrayOf("uuid", values);
            binds.add(a);
        }
    }

    @Test
    void aTenantIsPurgedInSmallStepsAndNothingOfItIsLeftWhileOthersAreUntouched() throws Exception {
        fillThroughHttp(GONE, List.of("q1", "q2", "q3"));
        fillThroughHttp(KEPT, List.of("q1", "q2"));
        fillThroughHttp(DEFAULT, List.of("q1"));
        Ids gone;
        Ids kept;
        Ids byDefault;
        Map<String, Long> keptBefore;
        Map<String, Long> defaultBefore;
        try (Connection c = TestPostgres.connect(db)) {
            fillDirectly(c, GONE);
            fillDirectly(c, KEPT);
            gone = ids(c, GONE);
            kept = ids(c, KEPT);
            byDefault = ids(c, DEFAULT);
            Map<String, Long> goneBefore = owned(c, gone);
            for (String table : List.of("queen.queues", "queen.log_partitions", "queen.log_segments", "queen.log_txns",
                    "queen.log_consumers", "queen.log_dlq", "queen.consumer_groups_metadata",
                    "queen.consumer_watermarks", "queen.message_traces", "queen.message_trace_names",
                    "queen.retention_history", "queen.stats", "queen.queue_lag_metrics", "queen.queue_parked_replica",
                    "queen.hotlist_repairs", "queen.kv", "queen.kv_quota", "queen.kv_usage", "queen.log_timers",
                    "queen.ephemeral_queues", "queen.ephemeral_quota", "queen_streams.queries", "queen_streams.state",
                    "queen_streams.quota")) {
                assertTrue(goneBefore.getOrDefault(table, 0L) > 0, "the test gives the tenant rows in " + table);
            }
            keptBefore = owned(c, kept);
            defaultBefore = owned(c, byDefault);
        }

        List<String> phases = new ArrayList<>();
        JsonNode last = null;
        for (int step = 0; step < 200; step++) {
            Reply r = purge(GONE, "{\"maxQueues\":1,\"maxRows\":2}");
            assertEquals(200, r.status(), String.valueOf(r.json()));
            last = r.json();
            assertEquals(GONE, last.get("tenant").asText());
            for (String residue : List.of("queen.message_traces", "queen.retention_history", "queen_streams.state")) {
                assertTrue(last.get("rows").has(residue), "rows always names the residue tables: " + last);
            }
            last.get("rows").fields().forEachRemaining(e -> assertTrue(e.getValue().asLong()
                    // Stream state is deleted by partition and, in the sweep, by query: two budgets.
                    <= (e.getKey().equals("queen_streams.state") ? 4 : 2), "bounded by maxRows per table: " + e));
            assertTrue(last.get("queues").get("deleted").asInt() <= 1, last.toString());
            phases.add(last.get("phase").asText());
            if (last.get("done").asBoolean()) {
                break;
            }
        }
        assertTrue(last.get("done").asBoolean(), "done within 200 steps: " + phases);
        assertEquals("complete", last.get("phase").asText());
        assertEquals(0, last.get("queues").get("remaining").asInt());
        assertTrue(phases.size() > 5, "small budgets take several steps: " + phases);
        assertTrue(phases.containsAll(List.of("timers", "queue-residue", "queues", "sweep", "complete")), phases.toString());
        assertEquals("timers", phases.get(0), "timers first: a firing timer would re-create a queue");

        try (Connection c = TestPostgres.connect(db)) {
            Map<String, Long> goneAfter = owned(c, gone);
            goneAfter.forEach((table, n) -> assertEquals(0L, n, "rows of the purged tenant left in " + table));
            // queen.stats is derived data the stats-refresh cycle rewrites on its own schedule: compare the rest.
            assertEquals(withoutStats(keptBefore), withoutStats(owned(c, kept)), "the other tenant, same queue names, is untouched");
            assertEquals(withoutStats(defaultBefore), withoutStats(owned(c, byDefault)), "the default tenant is untouched");
        }
        Reply again = purge(GONE, null);
        assertEquals(200, again.status());
        assertTrue(again.json().get("done").asBoolean(), "a purge of a purged tenant is done at once");
        assertEquals(200, call("GET", "/api/v1/pop/queue/q1?batch=10", KEPT, null).status(), "the other tenant still pops");
    }

    @Test
    void anUnknownTenantIsDoneAtOnce() {
        Reply r = purge(UUID.randomUUID().toString().toUpperCase(), "");
        assertEquals(200, r.status());
        assertTrue(r.json().get("done").asBoolean());
        assertEquals("complete", r.json().get("phase").asText());
        assertEquals(r.json().get("tenant").asText(), r.json().get("tenant").asText().toLowerCase());
    }

    @Test
    void theDefaultTenantBadIdsAndBadBudgetsAre400() {
        Reply refused = purge(DEFAULT, null);
        assertEquals(400, refused.status());
        assertTrue(refused.json().get("error").asText().contains("default tenant"), refused.json().toString());
        for (String bad : List.of("not-a-uuid", "0a0a0a0a00004000800000000000000a", "0a0a0a0a-0000-4000-8000-00000000000")) {
            Reply r = purge(bad, null);
            assertEquals(400, r.status(), bad);
            assertTrue(r.json().get("error").asText().contains("not a UUID"));
        }
        for (String body : List.of("{\"maxQueues\":0}", "{\"maxRows\":-1}", "{\"maxRows\":\"10\"}",
                "{\"maxQueues\":1.5}", "[1]", "{nope")) {
            assertEquals(400, purge(GONE, body).status(), body);
        }
    }

    private static Map<String, Long> withoutStats(Map<String, Long> counts) {
        Map<String, Long> copy = new java.util.TreeMap<>(counts);
        copy.remove("queen.stats");
        return copy;
    }
}
