package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fire across brokers sharing one database (broker/DESIGN.md, Timers): leaderless, each timer
 * delivered once; a timer scheduled on one broker wakes a consumer parked on the other; a broker
 * stopped in the middle of firing loses nothing and fires nothing twice; claims a dead broker left
 * come back when their lease ends.
 */
class TimerMultiBrokerIT {
    private static final Map<String, String> ENV = Map.of("QUEEN_SWEEPER_LEASE_MS", "2000");

    private static Map<String, Integer> drain(HttpProbe on, String queue, int expected, long maxMs) {
        Map<String, Integer> seen = new HashMap<>();
        long end = System.currentTimeMillis() + maxMs;
        int total = 0;
        while (total < expected && System.currentTimeMillis() < end) {
            JsonNode m = TimerRoutesIT.popOne(on, queue, 1000);
            if (m == null) {
                continue;
            }
            for (JsonNode x : m) {
                seen.merge(x.get("transactionId").asText(), 1, Integer::sum);
                total++;
            }
        }
        // Anything extra would show now.
        JsonNode more = TimerRoutesIT.popOne(on, queue, 1500);
        if (more != null) {
            more.forEach(x -> seen.merge(x.get("transactionId").asText(), 1, Integer::sum));
        }
        return seen;
    }

    private static String ops(String queue, int from, int to, long delayMs) {
        StringBuilder b = new StringBuilder();
        for (int i = from; i < to; i++) {
            b.append(b.isEmpty() ? "" : ",").append(TimerRoutesIT.schedule(queue, "k" + i, delayMs, "t" + i,
                    "{\"i\":" + i + "}"));
        }
        return b.toString();
    }

    private static void assertOnce(Map<String, Integer> seen, int n) {
        assertEquals(n, seen.size(), "every timer delivered: " + seen.size());
        seen.forEach((txn, times) -> assertEquals(1, times, txn + " delivered " + times + " times"));
    }

    @Test
    void twoBrokersShareTheFireAndWakeEachOthersConsumers() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("timer_two");
        try (Broker a = BrokerFixture.start(db, ENV); Broker b = BrokerFixture.start(db, ENV)) {
            HttpProbe onA = new HttpProbe(a.port());
            HttpProbe onB = new HttpProbe(b.port());
            // A consumer parked on B, a timer scheduled on A.
            onB.push("m_wake", "Default", "{}");
            TimerRoutesIT.popOne(onB, "m_wake", 1000);
            CompletableFuture<JsonNode> parked = CompletableFuture.supplyAsync(() -> TimerRoutesIT.popOne(onB, "m_wake", 15_000));
            // No parked count is visible over HTTP: a pop still pending after 300 ms has parked.
            Awaitility.await("the pop on B parks first").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                    .until(() -> !parked.isDone());
            long t0 = System.nanoTime();
            TimerRoutesIT.batch(onA, TimerRoutesIT.schedule("m_wake", "w", 100, "w", "{\"w\":1}"));
            JsonNode got = parked.get();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(1, got.size());
            assertTrue(ms < 2500, "woken after " + ms + " ms");

            // 400 timers due together, scheduled through both brokers, fired by both.
            for (int k = 0; k < 4; k++) {
                TimerRoutesIT.batch(k % 2 == 0 ? onA : onB, ops("m_many", k * 100, k * 100 + 100, 300).split(",(?=\\{\"op\")"));
            }
            assertOnce(drain(onA, "m_many", 400, 30_000), 400);
        }
    }

    @Test
    void aBrokerStoppedMidFireLosesNoTimerAndFiresNoneTwice() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("timer_stop");
        try (Broker survivor = BrokerFixture.start(db, ENV)) {
            HttpProbe on = new HttpProbe(survivor.port());
            Broker victim = BrokerFixture.start(db, ENV);
            HttpProbe onVictim = new HttpProbe(victim.port());
            for (int k = 0; k < 5; k++) {
                TimerRoutesIT.batch(onVictim, ops("m_stop", k * 100, k * 100 + 100, 0).split(",(?=\\{\"op\")"));
            }
            victim.close(); // while both are firing the 500 due timers
            // And claims a dead broker left behind: claimed, never fired.
            BrokerFixture.sql(db, "SELECT count(*) FROM queen.log_timers_claim_v1(0, 2000, 1000)");
            assertOnce(drain(on, "m_stop", 500, 60_000), 500);
            try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.log_timers")) {
                rs.next();
                assertEquals(0, rs.getLong(1));
            }
        }
    }
}
