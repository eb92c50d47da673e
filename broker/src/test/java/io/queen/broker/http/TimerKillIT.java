package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerJvm;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker process SIGKILLed while it fires (no shutdown hook, its open transaction and its claims
 * left behind): a broker started afterwards delivers every timer, and none twice. The victim fires
 * in small claims, so the kill lands with some timers fired, some claimed and some not yet touched.
 */
class TimerKillIT {
    private static final int TIMERS = 2_000;
    private static final String QUEUE = "kill_fire";
    private static final String LEASE_MS = "2000";

    @TempDir
    Path work;

    /** The victim, in its own JVM on the test's classpath, firing 10 timers a claim. */
    private static Process startVictim(DatabaseSettings db, int port, Path spool, Path log) throws IOException {
        return BrokerJvm.start(db, port, spool, log,
                Map.of("QUEEN_SWEEPER_LEASE_MS", LEASE_MS, "QUEEN_SWEEPER_CLAIM_BATCH", "10"));
    }

    private static long pending(DatabaseSettings db) throws Exception {
        try (Connection c = TestPostgres.connect(db); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.log_timers")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void timersOfABrokerKilledMidFireAreEachDeliveredExactlyOnce() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("timer_kill");
        Path log = work.resolve("victim.log");
        int port = BrokerJvm.freePort();
        Process victim = startVictim(db, port, work.resolve("spool"), log);
        long leftAtKill;
        try {
            HttpProbe onVictim = new HttpProbe(port);
            await().atMost(120, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS).ignoreExceptions()
                    .until(() -> {
                        if (!victim.isAlive()) {
                            throw new IllegalStateException("the broker exited: " + Files.readString(log));
                        }
                        return onVictim.get("/status").status() == 200;
                    });
            // All due together a moment after the last batch lands, so the fire starts on a full table.
            for (int from = 0; from < TIMERS; from += 250) {
                List<String> ops = new ArrayList<>();
                for (int i = from; i < from + 250; i++) {
                    ops.add(TimerRoutesIT.schedule(QUEUE, "k" + i, 4_000 - from, "t" + i, "{\"i\":" + i + "}"));
                }
                TimerRoutesIT.batch(onVictim, ops.toArray(String[]::new));
            }
            await().atMost(60, TimeUnit.SECONDS).pollInterval(5, TimeUnit.MILLISECONDS)
                    .until(() -> pending(db) <= TIMERS - 200);
            victim.destroyForcibly();
            assertTrue(victim.waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, victim.exitValue(), "killed by SIGKILL, no shutdown hook ran");
            leftAtKill = pending(db);
        } finally {
            if (victim.isAlive()) {
                victim.destroyForcibly();
            }
        }
        assertTrue(leftAtKill > 0, "the kill landed before the victim had fired everything");
        assertTrue(Files.readString(log).contains("timers fired"), "the victim was firing when killed");

        try (Broker next = BrokerFixture.start(db, Map.of("QUEEN_SWEEPER_LEASE_MS", LEASE_MS))) {
            HttpProbe on = new HttpProbe(next.port());
            Map<String, Integer> byTxn = new HashMap<>();
            Set<String> ids = new HashSet<>();
            int delivered = 0;
            long end = System.currentTimeMillis() + 90_000;
            while (delivered < TIMERS && System.currentTimeMillis() < end) {
                JsonNode batch = TimerRoutesIT.popOne(on, QUEUE, 1000);
                if (batch == null) {
                    continue;
                }
                for (JsonNode m : batch) {
                    byTxn.merge(m.get("transactionId").asText(), 1, Integer::sum);
                    ids.add(m.get("id").asText());
                    delivered++;
                }
            }
            // A second copy of anything would be in the log by now.
            await().atMost(30, TimeUnit.SECONDS).until(() -> pending(db) == 0);
            JsonNode more = TimerRoutesIT.popOne(on, QUEUE, 1500);
            if (more != null) {
                for (JsonNode m : more) {
                    byTxn.merge(m.get("transactionId").asText(), 1, Integer::sum);
                    ids.add(m.get("id").asText());
                    delivered++;
                }
            }
            System.out.println("[SIGKILL mid-fire] " + (TIMERS - leftAtKill) + " of " + TIMERS
                    + " gone from log_timers at the kill; " + delivered + " delivered after the restart");
            assertEquals(TIMERS, byTxn.size(), "every timer delivered");
            byTxn.forEach((txn, n) -> assertEquals(1, n, txn + " delivered " + n + " times"));
            assertEquals(TIMERS, delivered, "no message twice");
            assertEquals(TIMERS, ids.size(), "one message id per timer");
            assertEquals(0, pending(db));
        }
    }
}
