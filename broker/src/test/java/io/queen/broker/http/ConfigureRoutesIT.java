package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** POST /api/v1/configure over real HTTP: every option, defaults, replace and merge, and every refusal. */
class ConfigureRoutesIT {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static DatabaseSettings db;
    static Broker broker;
    static HttpProbe http;

    /** Every option with its default when configured (the reference broker's defaults, 012_configure.sql). */
    static final Map<String, Object> DEFAULTS = new LinkedHashMap<>();
    /** A non-default value for every option, and the queues column each one lands in. */
    static final Map<String, Object> CUSTOM = new LinkedHashMap<>();
    static final Map<String, String> COLUMN = new LinkedHashMap<>();

    static {
        option("namespace", "", "billing", "namespace");
        option("task", "", "invoice", "task");
        option("priority", 0, 7, "priority");
        option("leaseTime", 300, 45, "lease_time");
        option("retryLimit", 3, 9, "retry_limit");
        option("retryDelay", 1000, 2500, "retry_delay");
        option("maxSize", 0, 5000, "max_queue_size");
        option("ttl", 3600, 120, "ttl");
        option("deadLetterQueue", true, false, "dead_letter_queue");
        option("dlqAfterMaxRetries", true, false, "dlq_after_max_retries");
        option("delayedProcessing", 0, 11, "delayed_processing");
        option("windowBuffer", 0, 13, "window_buffer");
        option("retentionEnabled", false, true, "retention_enabled");
        option("retentionSeconds", 0, 86400, "retention_seconds");
        option("completedRetentionSeconds", 0, 600, "completed_retention_seconds");
        option("maxWaitTimeSeconds", 0, 7200, "max_wait_time_seconds");
        option("encryptionEnabled", false, true, "encryption_enabled");
        option("minPopWaitTime", 0, 250, "min_pop_wait_time");
        option("dedupWindowSeconds", 3600, 60, "dedup_window_seconds");
        option("retentionSinkHold", "", "lake-1.eu_west", "retention_sink_hold");
        option("retentionSinkHoldMaxSeconds", 604800, 3600, "retention_sink_hold_max_seconds");
    }

    private static void option(String key, Object defaultValue, Object custom, String column) {
        DEFAULTS.put(key, defaultValue);
        CUSTOM.put(key, custom);
        COLUMN.put(key, column);
    }

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("configure_routes");
        broker = BrokerFixture.start(db, Map.of());
        http = new HttpProbe(broker.port());
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Reply configure(String body) {
        return http.post("/api/v1/configure", body);
    }

    static JsonNode configureOk(String body) {
        Reply r = configure(body);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static String json(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The options of a configure echo or detail as expected: namespace and task are not in the echo's options. */
    static JsonNode expected(Map<String, Object> values, boolean withLabels) {
        ObjectNode o = MAPPER.createObjectNode();
        values.forEach((k, v) -> {
            if (withLabels || !(k.equals("namespace") || k.equals("task"))) {
                o.set(k, MAPPER.valueToTree(v));
            }
        });
        return o;
    }

    /** The queues row of the default tenant, keyed by option name. */
    static Map<String, Object> row(String queue) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        try (Connection c = TestPostgres.connect(db);
             PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.queues WHERE name = ?"
                     + " AND tenant_id = '00000000-0000-0000-0000-000000000001'")) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no queues row for " + queue);
                for (Map.Entry<String, String> e : COLUMN.entrySet()) {
                    out.put(e.getKey(), rs.getObject(e.getValue()));
                }
            }
        }
        return out;
    }

    static JsonNode detailOptions(String queue) {
        Reply r = http.get("/api/v1/resources/queues/" + queue);
        assertEquals(200, r.status(), r.body());
        return r.json().get("options");
    }

    @Test
    void everyOptionRoundTripsThroughTheEchoTheDetailAndTheRow() throws Exception {
        JsonNode echo = configureOk("{\"queue\":\"full\",\"options\":" + json(CUSTOM) + "}");
        assertTrue(echo.get("configured").asBoolean());
        assertTrue(echo.get("partitionId").isNull());
        assertEquals("full", echo.get("queue").asText());
        assertEquals("segments", echo.get("storage").asText());
        assertEquals("billing", echo.get("namespace").asText());
        assertEquals("invoice", echo.get("task").asText());
        assertEquals(new TreeSet<>(List.of("configured", "queueId", "partitionId", "queue", "namespace",
                "task", "storage", "options")), fieldNames(echo));
        assertEquals(expected(CUSTOM, false), echo.get("options"), "the echo carries all 19 options");

        assertEquals(expected(CUSTOM, true), detailOptions("full"), "GET detail reads back all 21 keys");
        assertEquals(echo.get("queueId").asText(), http.get("/api/v1/resources/queues/full").json().get("id").asText());

        Map<String, Object> row = row("full");
        for (String key : CUSTOM.keySet()) {
            assertEquals(String.valueOf(CUSTOM.get(key)), String.valueOf(row.get(key)), "column of " + key);
        }
    }

    @Test
    void aBareConfigureWritesEveryDefault() throws Exception {
        JsonNode echo = configureOk("{\"queue\":\"bare\"}");
        assertEquals(expected(DEFAULTS, false), echo.get("options"));
        assertEquals(expected(DEFAULTS, true), detailOptions("bare"));
        Map<String, Object> row = row("bare");
        for (String key : DEFAULTS.keySet()) {
            assertEquals(String.valueOf(DEFAULTS.get(key)), String.valueOf(row.get(key)), "column of " + key);
        }
    }

    @Test
    void optionsMayBeTopLevelWithTheLabelsFoldedIn() {
        JsonNode echo = configureOk("{\"queue\":\"flat\",\"namespace\":\"ns\",\"task\":\"tk\",\"leaseTime\":77,"
                + "\"retryLimit\":1,\"mode\":\"replace\"}");
        assertEquals("ns", echo.get("namespace").asText());
        assertEquals("tk", echo.get("task").asText());
        assertEquals(77, echo.get("options").get("leaseTime").asInt());
        assertEquals(1, echo.get("options").get("retryLimit").asInt());
        assertFalse(echo.get("options").has("mode"), "mode is a routing key, not an option");

        // A label spelled in the bag wins over the top level, even when it clears it.
        JsonNode cleared = configureOk("{\"queue\":\"flat\",\"namespace\":\"ns\",\"options\":{\"namespace\":\"\"}}");
        assertEquals("", cleared.get("namespace").asText());
        // Numeric strings are read as the reference's casts read them.
        assertEquals(12, configureOk("{\"queue\":\"flat\",\"options\":{\"leaseTime\":\"12\"}}")
                .get("options").get("leaseTime").asInt());
    }

    @Test
    void replaceResetsEveryOptionItDoesNotName() {
        configureOk("{\"queue\":\"rep\",\"options\":" + json(CUSTOM) + "}");
        JsonNode echo = configureOk("{\"queue\":\"rep\",\"mode\":\"replace\",\"options\":{\"leaseTime\":42}}");
        Map<String, Object> want = new LinkedHashMap<>(DEFAULTS);
        want.put("leaseTime", 42);
        assertEquals(expected(want, false), echo.get("options"));
        assertEquals(expected(want, true), detailOptions("rep"));
    }

    @Test
    void withoutModeACallMergesAsTheNewestBrokersDo() {
        configureOk("{\"queue\":\"nomode\",\"options\":" + json(CUSTOM) + "}");
        JsonNode echo = configureOk("{\"queue\":\"nomode\",\"options\":{\"retryLimit\":5}}");
        Map<String, Object> want = new LinkedHashMap<>(CUSTOM);
        want.put("retryLimit", 5);
        assertEquals(expected(want, false), echo.get("options"));
        assertEquals("billing", echo.get("namespace").asText());
        assertEquals(expected(want, false),
                configureOk("{\"queue\":\"nomode\",\"mode\":null,\"options\":{\"retryLimit\":5}}").get("options"));
    }

    @Test
    void mergeKeepsAbsentOptionsAndNullRestoresTheDefault() {
        configureOk("{\"queue\":\"mrg\",\"options\":" + json(CUSTOM) + "}");
        JsonNode echo = configureOk("{\"queue\":\"mrg\",\"mode\":\"merge\",\"options\":{\"retryLimit\":1,"
                + "\"ttl\":null,\"deadLetterQueue\":null,\"task\":null}}");
        Map<String, Object> want = new LinkedHashMap<>(CUSTOM);
        want.put("retryLimit", 1);
        want.put("ttl", 3600);
        want.put("deadLetterQueue", true);
        want.put("task", "");
        assertEquals(expected(want, false), echo.get("options"));
        assertEquals("billing", echo.get("namespace").asText(), "an absent label is kept by a merge");
        assertEquals("", echo.get("task").asText(), "null restores the default label");
        assertEquals(expected(want, true), detailOptions("mrg"));

        // A replace hidden in the bag is not a way around mode: the merge still keeps everything.
        JsonNode sneaky = configureOk("{\"queue\":\"mrg\",\"mode\":\"merge\",\"options\":{\"replace\":true}}");
        assertEquals(expected(want, false), sneaky.get("options"));
    }

    @Test
    void aMergeOnAPushCreatedQueueKeepsTheLabelsDerivedFromItsName() {
        assertEquals(201, http.post("/api/v1/push",
                "{\"items\":[{\"queue\":\"shop.orders\",\"payload\":1}]}").status());
        JsonNode echo = configureOk("{\"queue\":\"shop.orders\",\"mode\":\"merge\",\"options\":{\"leaseTime\":30}}");
        assertEquals("shop", echo.get("namespace").asText());
        assertEquals("orders", echo.get("task").asText());
        JsonNode kept = configureOk("{\"queue\":\"shop.orders\",\"mode\":\"merge\",\"options\":{}}").get("options");
        assertEquals(30, kept.get("leaseTime").asInt());
        assertEquals(3, kept.get("retryLimit").asInt(), "the push-created row's column default is kept");
    }

    @Test
    void clampsAndFloorsAreAppliedNotRejected() {
        JsonNode high = configureOk("{\"queue\":\"clamp\",\"options\":{\"minPopWaitTime\":70000,"
                + "\"dedupWindowSeconds\":-30}}").get("options");
        assertEquals(60000, high.get("minPopWaitTime").asInt());
        assertEquals(0, high.get("dedupWindowSeconds").asInt());
        assertEquals(0, configureOk("{\"queue\":\"clamp\",\"options\":{\"minPopWaitTime\":-1}}")
                .get("options").get("minPopWaitTime").asInt());
    }

    @Test
    void eachInvalidOptionIsA400NamingItAndWritesNothing() throws Exception {
        configureOk("{\"queue\":\"strict\",\"options\":" + json(CUSTOM) + "}");
        Map<String, Object> before = row("strict");
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("leaseTime", "\"soon\"");
        bad.put("retryLimit", "1.5");
        bad.put("retryDelay", "-1");
        bad.put("maxSize", "true");
        bad.put("ttl", "-5");
        bad.put("priority", "99999999999");
        bad.put("delayedProcessing", "[1]");
        bad.put("windowBuffer", "-2");
        bad.put("retentionSeconds", "-1");
        bad.put("completedRetentionSeconds", "{}");
        bad.put("maxWaitTimeSeconds", "-1");
        bad.put("minPopWaitTime", "\"fast\"");
        bad.put("dedupWindowSeconds", "false");
        bad.put("deadLetterQueue", "1");
        bad.put("dlqAfterMaxRetries", "\"maybe\"");
        bad.put("retentionEnabled", "0");
        bad.put("encryptionEnabled", "[]");
        bad.put("namespace", "5");
        bad.put("task", "{\"a\":1}");
        bad.put("retentionSinkHold", "\"s3:bucket\"");
        bad.put("retentionSinkHoldMaxSeconds", "59");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            Reply r = configure("{\"queue\":\"strict\",\"mode\":\"merge\",\"options\":{\"" + e.getKey() + "\":"
                    + e.getValue() + "}}");
            assertEquals(400, r.status(), e.getKey() + " = " + e.getValue() + ": " + r.body());
            assertEquals(e.getKey(), r.json().get("invalid").asText(), r.body());
            assertTrue(r.json().get("error").asText().startsWith(e.getKey()), r.body());
        }
        Reply tooLong = configure("{\"queue\":\"strict\",\"options\":{\"retentionSinkHoldMaxSeconds\":31536001}}");
        assertEquals(400, tooLong.status());
        assertEquals("retentionSinkHoldMaxSeconds must be between 60 and 31536000, got 31536001",
                tooLong.json().get("error").asText());
        Reply sink = configure("{\"queue\":\"strict\",\"options\":{\"retentionSinkHold\":\"" + "x".repeat(65) + "\"}}");
        assertEquals(400, sink.status());
        assertEquals(before, row("strict"), "a refused configure writes nothing");
    }

    @Test
    void badRequestsAreRefusedBeforeAnythingIsWritten() throws Exception {
        Reply patch = configure("{\"queue\":\"modes\",\"mode\":\"patch\"}");
        assertEquals(400, patch.status());
        assertEquals("mode must be \"merge\" or \"replace\", got \"patch\"", patch.json().get("error").asText());
        assertEquals(400, configure("{\"queue\":\"modes\",\"mode\":true}").status());
        assertEquals(400, configure("{\"queue\":\"modes\",\"mode\":\"Replace\"}").status());

        Reply missing = configure("{\"options\":{}}");
        assertEquals(400, missing.status());
        assertEquals("queue is required", missing.json().get("error").asText());
        assertEquals("queue is required", configure("{\"queue\":5}").json().get("error").asText());
        assertEquals("queue is required", configure("[1,2]").json().get("error").asText());
        Reply notJson = configure("{oops");
        assertEquals(400, notJson.status());
        assertTrue(notJson.json().get("error").asText().startsWith("bad body: "), notJson.body());
        try (Connection c = TestPostgres.connect(db);
             ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM queen.queues WHERE name = 'modes'")) {
            rs.next();
            assertEquals(0, rs.getInt(1));
        }
        assertEquals(200, configure("{\"queue\":\"\"}").status(), "an empty string is a legal queue name");
    }

    @Test
    void theNextPushSeesTheNewConfigurationAtOnce() {
        String push = "{\"items\":[{\"queue\":\"fresh\",\"payload\":1,\"transactionId\":\"same-txn\"}]}";
        assertEquals("queued", http.post("/api/v1/push", push).json().get(0).get("status").asText());
        assertEquals("duplicate", http.post("/api/v1/push", push).json().get(0).get("status").asText());
        // The broker caches the dedup window for 5 s; configure must drop that entry.
        configureOk("{\"queue\":\"fresh\",\"mode\":\"merge\",\"options\":{\"dedupWindowSeconds\":0}}");
        assertEquals("queued", http.post("/api/v1/push", push).json().get(0).get("status").asText());
    }

    private static TreeSet<String> fieldNames(JsonNode node) {
        TreeSet<String> out = new TreeSet<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
