package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PostgreSQL refusing connections while the broker serves: a push is written to the on-disk spool
 * and answered {@code buffered} (201, the normal answer shape), pop and fetch answer a 5xx with a
 * JSON error (never a 2xx for what was not read), the spool's status shows the outage, and once the
 * database is back the broker serves again by itself and replays the spooled push.
 */
class DatabaseOutageIT {
    @TempDir
    Path spoolDir;

    static String push(int n) {
        return "{\"items\":[{\"queue\":\"outage\",\"partition\":\"p\",\"payload\":{\"n\":" + n
                + "},\"transactionId\":\"outage-" + n + "\"}]}";
    }

    static void allowConnections(DatabaseSettings db, boolean allow) throws SQLException {
        try (Connection admin = TestPostgres.admin(); Statement st = admin.createStatement()) {
            st.execute("ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS " + allow);
            if (!allow) {
                st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"
                        + db.database() + "'");
            }
        }
    }

    /** One sample of a Prometheus series without labels. */
    static double gauge(HttpProbe http, String family) {
        for (String line : http.get("/metrics/prometheus").body().split("\n")) {
            if (line.startsWith(family + " ")) {
                return Double.parseDouble(line.substring(family.length() + 1).trim());
            }
        }
        throw new AssertionError(family + " is not exposed");
    }

    @Test
    void pushesAreSpooledDuringAnOutageWhilePopAndFetchAnswer5xxAndAllIsServedAfter() throws SQLException {
        DatabaseSettings db = TestPostgres.freshDatabase("db_outage");
        try (Broker broker = BrokerFixture.startWithSpool(db, spoolDir, Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            Reply before = http.post("/api/v1/push", push(0));
            assertEquals(201, before.status(), before.body());
            assertEquals("queued", before.json().get(0).get("status").asText());

            allowConnections(db, false);
            try {
                Reply spooled = http.post("/api/v1/push", push(1));
                assertEquals(201, spooled.status(), spooled.body());
                assertEquals("buffered", spooled.json().get(0).get("status").asText(), spooled.body());
                assertEquals("outage-1", spooled.json().get(0).get("transaction_id").asText());
                assertEquals("outage", spooled.json().get(0).get("queueName").asText());

                List<Reply> during = List.of(
                        http.get("/api/v1/pop/queue/outage?batch=10&wait=false"),
                        http.post("/api/v1/fetch", "{\"entries\":[{\"queue\":\"outage\",\"partition\":\"p\",\"offset\":0}]}"));
                for (Reply r : during) {
                    // A broken connection and no connection within the pool's timeout alike: a 503
                    // (the reference answers the latter 500 {"error":"pool"}, which clients cannot tell
                    // from a bug).
                    assertEquals(503, r.status(), r.body());
                    assertEquals("database_unavailable", r.json().path("code").asText(), r.body());
                }

                JsonNode buffers = http.get("/api/v1/status/buffers").json();
                assertEquals(1, buffers.get("pending").asLong(), buffers.toString());
                assertFalse(buffers.get("dbHealthy").asBoolean(), buffers.toString());
                assertEquals(0, buffers.get("failed").asLong());
                assertEquals(1.0, gauge(http, "queen_file_buffer_pending"));
                assertEquals(0.0, gauge(http, "queen_file_buffer_db_healthy"));
            } finally {
                allowConnections(db, true);
            }

            // Back by itself: the spool drains, and the health it reports returns.
            await().atMost(60, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> http.get("/api/v1/status/buffers").json().get("pending").asLong() == 0);
            JsonNode buffers = http.get("/api/v1/status/buffers").json();
            assertTrue(buffers.get("dbHealthy").asBoolean(), buffers.toString());
            assertEquals(1.0, gauge(http, "queen_file_buffer_db_healthy"));
            assertEquals(0.0, gauge(http, "queen_file_buffer_pending"));
            Reply after = http.post("/api/v1/push", push(2));
            assertEquals("queued", after.json().get(0).get("status").asText(), after.body());

            List<Integer> delivered = new ArrayList<>();
            Reply pop = http.get("/api/v1/pop/queue/outage?batch=10&wait=false&autoAck=true");
            assertEquals(200, pop.status(), pop.body());
            for (JsonNode m : pop.json().get("messages")) {
                delivered.add(m.get("data").get("n").asInt());
            }
            assertEquals(List.of(0, 1, 2), delivered, "the spooled push replayed in its place, each once");
        }
    }
}
