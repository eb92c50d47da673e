package io.queen.broker.http;

import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerJvm;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.queen.broker.http.DatabaseOutageIT.allowConnections;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker process killed hard (SIGKILL, no shutdown hook) while pushes of a database outage sit in
 * its spool: the next process on the same FILE_BUFFER_DIR replays them at boot, before it serves,
 * and each is delivered exactly once.
 */
class SpoolCrashIT {
    @TempDir
    Path work;

    /** A broker in its own JVM, on the test's classpath, logging to {@code log}. */
    private static Process startBroker(DatabaseSettings db, Path spool, int port, Path log) throws IOException {
        return BrokerJvm.start(db, port, spool, log, Map.of("FILE_BUFFER_FLUSH_MS", "20"));
    }

    private static HttpProbe awaitServing(Process broker, int port, Path log) {
        HttpProbe http = new HttpProbe(port);
        await().atMost(120, TimeUnit.SECONDS).pollInterval(200, TimeUnit.MILLISECONDS).ignoreExceptions()
                .until(() -> {
                    if (!broker.isAlive()) {
                        throw new IllegalStateException("the broker exited: " + Files.readString(log));
                    }
                    return http.get("/status").status() == 200;
                });
        return http;
    }

    private static long spoolFiles(Path spool) throws IOException {
        if (!Files.isDirectory(spool)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(spool)) {
            return files.filter(p -> p.getFileName().toString().startsWith("spool-")).count();
        }
    }

    @Test
    void itemsSpooledByABrokerKilledDuringAnOutageAreReplayedByTheNextProcessAtBoot() throws Exception {
        DatabaseSettings db = TestPostgres.freshDatabase("spool_crash");
        Path spool = work.resolve("spool");
        PushOutageIT.Answers answers = new PushOutageIT.Answers();
        Process first = null;
        Process second = null;
        try {
            int port = BrokerJvm.freePort();
            first = startBroker(db, spool, port, work.resolve("first.log"));
            HttpProbe http = awaitServing(first, port, work.resolve("first.log"));
            answers.record(http.post("/api/v1/push", PushOutageIT.request("before", 0, 3)));
            assertEquals(3, answers.queued.get(), answers.refused.toString());

            allowConnections(db, false);
            try {
                for (int n = 0; n < 20; n++) {
                    answers.record(http.post("/api/v1/push", PushOutageIT.request("spooled", n, 5)));
                }
                assertEquals(100, answers.buffered.get(), answers.refused.toString());
                first.destroyForcibly();
                assertTrue(first.waitFor(30, TimeUnit.SECONDS));
                assertEquals(137, first.exitValue(), "killed by SIGKILL, no shutdown hook ran");
            } finally {
                allowConnections(db, true);
            }
            assertTrue(spoolFiles(spool) > 0, "the killed broker left its spool behind");

            int nextPort = BrokerJvm.freePort();
            second = startBroker(db, spool, nextPort, work.resolve("second.log"));
            HttpProbe next = awaitServing(second, nextPort, work.resolve("second.log"));
            // Replayed before the port opened.
            assertEquals(0, next.get("/api/v1/status/buffers").json().get("pending").asLong());
            assertEquals(0, spoolFiles(spool), "replayed files are deleted");

            Map<String, String> delivered = PushOutageIT.deliverAll(next);
            System.out.println("[SIGKILL during outage] acknowledged " + answers.acknowledged.size() + " items ("
                    + answers.queued.get() + " queued, " + answers.buffered.get() + " buffered), delivered "
                    + delivered.size() + " after the restart");
            PushOutageIT.assertDeliveredExactlyOnce(answers, delivered);
            assertTrue(Files.readString(work.resolve("second.log")).contains("boot replay done"),
                    "the items came back through the boot-time replay");
        } finally {
            for (Process p : new Process[] {first, second}) {
                if (p != null && p.isAlive()) {
                    p.destroy();
                    if (!p.waitFor(30, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                }
            }
        }
    }
}
