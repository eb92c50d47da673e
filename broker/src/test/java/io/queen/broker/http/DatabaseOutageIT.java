package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.HttpProbe.Reply;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PostgreSQL refusing connections while the broker serves: push, pop and fetch answer a 5xx with a
 * JSON error (never a 2xx for what was not stored), nothing is half-written, and the broker serves
 * again by itself once the database is back.
 */
class DatabaseOutageIT {

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

    @Test
    void theMessagePathAnswers5xxDuringAnOutageAndServesAgainAfter() throws SQLException {
        DatabaseSettings db = TestPostgres.freshDatabase("db_outage");
        try (Broker broker = BrokerFixture.start(db, Map.of())) {
            HttpProbe http = new HttpProbe(broker.port());
            assertEquals(201, http.post("/api/v1/push", push(0)).status());

            allowConnections(db, false);
            try {
                List<Reply> during = List.of(
                        http.post("/api/v1/push", push(1)),
                        http.get("/api/v1/pop/queue/outage?batch=10&wait=false"),
                        http.post("/api/v1/fetch", "{\"entries\":[{\"queue\":\"outage\",\"partition\":\"p\",\"offset\":0}]}"));
                for (Reply r : during) {
                    // A connection that broke under the request is a 503; no connection within the
                    // pool's timeout is the reference's 500 {"error":"pool"}. Never another 500.
                    String error = r.json().path("error").asText();
                    assertTrue((r.status() == 503 && error.equals("database unavailable"))
                            || (r.status() == 500 && error.equals("pool")), r.status() + " " + r.body());
                }
            } finally {
                allowConnections(db, true);
            }

            // Back by itself: the same push (same transactionId) until it is taken.
            await().atMost(30, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS)
                    .until(() -> http.post("/api/v1/push", push(2)).status() == 201);
            List<Integer> delivered = new ArrayList<>();
            Reply pop = http.get("/api/v1/pop/queue/outage?batch=10&wait=false&autoAck=true");
            assertEquals(200, pop.status(), pop.body());
            for (JsonNode m : pop.json().get("messages")) {
                delivered.add(m.get("data").get("n").asInt());
            }
            assertEquals(List.of(0, 2), delivered, "the push answered 5xx was not stored, the later one once");
        }
    }
}
