package io.queen.broker.engine;

import io.queen.broker.config.MaintenanceSettings;
import io.queen.broker.engine.spool.SpoolDirectory;
import io.queen.broker.engine.spool.SpoolFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The spool without a database: durability across a "crash", replay order, and failure handling. */
class PushSpoolTest {
    static final UUID TENANT_A = UUID.fromString("aaaaaaaa-0000-0000-0000-000000000001");
    static final UUID TENANT_B = UUID.fromString("bbbbbbbb-0000-0000-0000-000000000001");

    @TempDir
    Path dir;

    /** A push path that records what it was given, and can be told to fail. */
    static final class RecordingPush implements PushSpool.Replayer {
        final List<UUID> tenants = new CopyOnWriteArrayList<>();
        final List<PushService.Item> items = new CopyOnWriteArrayList<>();
        final AtomicBoolean down = new AtomicBoolean();
        volatile String refusedTxn;
        int calls;

        @Override
        public synchronized List<PushService.Result> push(UUID tenant, List<PushService.Item> batch) throws SQLException {
            calls++;
            if (down.get()) {
                throw new SQLTransientConnectionException("no connection");
            }
            if (batch.stream().anyMatch(i -> i.transactionId().equals(refusedTxn))) {
                throw new SQLException("value too long for type character varying(255)", "22001");
            }
            List<PushService.Result> out = new ArrayList<>();
            for (PushService.Item i : batch) {
                tenants.add(tenant);
                items.add(i);
                out.add(new PushService.Result(out.size(), UUID.randomUUID(), i.transactionId(), i.queue(), "queued"));
            }
            return out;
        }

        List<String> txns() {
            return items.stream().map(PushService.Item::transactionId).toList();
        }
    }

    private PushSpool spool(PushSpool.Replayer push, AtomicBoolean paused, int maxBatch, int perFile) {
        return new PushSpool(new MaintenanceSettings(dir, 10, maxBatch, perFile, 1000), push, paused::get);
    }

    static PushService.Item item(String queue, String txn, String payload) {
        return new PushService.Item(queue, "Default", payload.getBytes(StandardCharsets.UTF_8), txn, null);
    }

    private List<Path> spoolFiles() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("spool-")).sorted().toList();
        }
    }

    @Test
    void itemsAreAnsweredBufferedWithTheirTransactionIdsAndNothingIsReplayedWhilePaused() {
        RecordingPush push = new RecordingPush();
        AtomicBoolean paused = new AtomicBoolean(true);
        PushSpool s = spool(push, paused, 100, 1000);
        List<PushService.Result> r = s.buffer(TENANT_A, List.of(item("q", "t-1", "1"), item("q", null, "2")));
        assertEquals(List.of("buffered", "buffered"), r.stream().map(PushService.Result::status).toList());
        assertEquals("t-1", r.get(0).transactionId());
        assertEquals(r.get(1).messageId().toString(), r.get(1).transactionId(),
                "without a client transactionId the answered message id is the one replayed with");
        assertEquals(2, s.pendingCount());
        assertEquals(0, s.drain(Long.MAX_VALUE));
        assertTrue(push.items.isEmpty());
        paused.set(false);
        assertEquals(2, s.drain(Long.MAX_VALUE));
        assertEquals(List.of("t-1", r.get(1).transactionId()), push.txns());
        assertEquals(0, s.pendingCount());
        s.close();
    }

    @Test
    void aSpoolLeftByACrashedRunIsReplayedInOrderByTheNextRunAndATornLastRecordIsIgnored() throws IOException {
        RecordingPush none = new RecordingPush();
        PushSpool crashed = spool(none, new AtomicBoolean(true), 100, 3);
        for (int i = 0; i < 7; i++) {
            crashed.buffer(i < 5 ? TENANT_A : TENANT_B, List.of(item("q" + (i % 2), "t-" + i, "{\"i\":" + i + "}")));
        }
        // No close(): the process "died". Its last file then gets half a record, as a write cut short would.
        List<Path> files = spoolFiles();
        assertEquals(3, files.size(), "rotated every 3 items");
        byte[] half = Arrays.copyOf(SpoolFile.encode(new SpoolFile.Entry(TENANT_B, UUID.randomUUID(), "q", "Default",
                "never-acknowledged", null, null, new byte[100])), 50);
        Files.write(files.get(2), half, StandardOpenOption.APPEND);

        RecordingPush push = new RecordingPush();
        PushSpool next = spool(push, new AtomicBoolean(false), 2, 3);
        assertEquals(7, next.pendingCount(), "counted at boot");
        next.recoverAtBoot();
        assertEquals(List.of("t-0", "t-1", "t-2", "t-3", "t-4", "t-5", "t-6"), push.txns());
        assertEquals(List.of(TENANT_A, TENANT_A, TENANT_A, TENANT_A, TENANT_A, TENANT_B, TENANT_B), push.tenants);
        assertEquals("{\"i\":4}", new String(push.items.get(4).payload(), StandardCharsets.UTF_8));
        assertEquals(0, next.pendingCount());
        assertTrue(spoolFiles().isEmpty(), "replayed files are deleted");
        next.close();
    }

    @Test
    void aDatabaseOutageKeepsTheFileAndTheNextDrainResumesAfterTheLastReplayedBatch() throws IOException {
        RecordingPush push = new RecordingPush();
        AtomicBoolean paused = new AtomicBoolean(true);
        PushSpool s = spool(push, paused, 2, 1000);
        for (int i = 0; i < 5; i++) {
            s.buffer(TENANT_A, List.of(item("q", "t-" + i, "0")));
        }
        paused.set(false);
        // Fail from the second batch on.
        PushSpool.Replayer flaky = (tenant, items) -> {
            if (push.calls >= 1) {
                push.down.set(true);
            }
            return push.push(tenant, items);
        };
        PushSpool s2 = new PushSpool(new MaintenanceSettings(dir, 10, 2, 1000, 1000), flaky, paused::get);
        s.close();
        s2.drain(Long.MAX_VALUE);
        assertEquals(2, push.items.size(), "the first batch went in before the outage");
        assertFalse(s2.databaseHealthy());
        assertFalse(s2.healthy());
        assertEquals(3, s2.pendingCount());
        assertEquals(1, spoolFiles().size(), "the file stays while the database is down");
        push.down.set(false);
        push.calls = 0;
        PushSpool.Replayer healthy = push;
        PushSpool s3 = new PushSpool(new MaintenanceSettings(dir, 10, 2, 1000, 1000), healthy, paused::get);
        // A new run starts the file over: the two already pushed are pushed again (dedup absorbs them).
        s3.drain(Long.MAX_VALUE);
        assertEquals(List.of("t-0", "t-1", "t-0", "t-1", "t-2", "t-3", "t-4"), push.txns());
        assertTrue(s3.databaseHealthy());
        assertTrue(spoolFiles().isEmpty());
    }

    @Test
    void withinOneRunARetriedFileIsNotPushedTwice() {
        RecordingPush push = new RecordingPush();
        AtomicBoolean paused = new AtomicBoolean(true);
        PushSpool s = spool(push, paused, 2, 1000);
        for (int i = 0; i < 5; i++) {
            s.buffer(TENANT_A, List.of(item("q", "t-" + i, "0")));
        }
        paused.set(false);
        PushSpool.Replayer flaky = new PushSpool.Replayer() {
            int n;

            @Override
            public List<PushService.Result> push(UUID tenant, List<PushService.Item> items) throws SQLException {
                if (n++ == 1) {
                    throw new SQLException("terminating connection due to administrator command", "57P01");
                }
                return push.push(tenant, items);
            }
        };
        PushSpool same = new PushSpool(new MaintenanceSettings(dir, 10, 2, 1000, 1000), flaky, paused::get);
        s.close();
        same.drain(Long.MAX_VALUE);
        assertEquals(3, same.pendingCount());
        same.drain(Long.MAX_VALUE);
        assertEquals(List.of("t-0", "t-1", "t-2", "t-3", "t-4"), push.txns());
        assertEquals(0, same.pendingCount());
    }

    @Test
    void anItemTheDatabaseRefusesForGoodIsSetAsideAndTheRestStillReplays() throws IOException {
        RecordingPush push = new RecordingPush();
        push.refusedTxn = "t-1";
        AtomicBoolean paused = new AtomicBoolean(true);
        PushSpool s = spool(push, paused, 10, 1000);
        s.buffer(TENANT_A, List.of(item("q", "t-0", "0"), item("q", "t-1", "1"), item("q", "t-2", "2")));
        paused.set(false);
        s.drain(Long.MAX_VALUE);
        assertEquals(List.of("t-0", "t-2"), push.txns());
        assertEquals(0, s.pendingCount());
        try (Stream<Path> failed = Files.list(dir.resolve(SpoolDirectory.FAILED_DIR))) {
            Path kept = failed.findFirst().orElse(null);
            assertNotNull(kept, "the refused item is kept on disk");
            try (SpoolFile.Reader r = new SpoolFile.Reader(kept)) {
                assertEquals("t-1", r.next().transactionId());
            }
        }
        s.close();
    }

    @Test
    void theDrainLoopReplaysOnceMaintenanceIsOff() {
        RecordingPush push = new RecordingPush();
        AtomicBoolean paused = new AtomicBoolean(true);
        AtomicInteger pauseChecks = new AtomicInteger();
        // Only the drain loop asks, once a pass: counting the questions counts its passes.
        PushSpool s = new PushSpool(new MaintenanceSettings(dir, 10, 100, 1000, 1000), push, () -> {
            pauseChecks.incrementAndGet();
            return paused.get();
        });
        s.buffer(TENANT_A, List.of(item("q", "t-0", "0")));
        s.start();
        // A second question means the first pass, which saw the item, has ended.
        await().atMost(10, TimeUnit.SECONDS).until(() -> pauseChecks.get() >= 2);
        assertTrue(push.items.isEmpty(), "nothing replays while paused");
        paused.set(false);
        await().atMost(10, TimeUnit.SECONDS).until(() -> s.pendingCount() == 0);
        assertEquals(List.of("t-0"), push.txns());
        s.close();
    }

    @Test
    void anUnwritableSpoolAnswersFailed() throws IOException {
        Path notADir = dir.resolve("file");
        Files.writeString(notADir, "x");
        PushSpool s = new PushSpool(new MaintenanceSettings(notADir.resolve("sub"), 10, 10, 10, 1000),
                new RecordingPush(), () -> true);
        List<PushService.Result> r = s.buffer(TENANT_A, List.of(item("q", "t-0", "0")));
        assertEquals("failed", r.get(0).status());
        assertTrue(PushSpool.anyFailed(r));
        assertEquals(1, s.failedCount());
        assertFalse(s.healthy());
    }

    @Test
    void anOutageItemIsSpooledAndReplayedWithTheIdsItWasPushedWith() {
        RecordingPush push = new RecordingPush();
        push.down.set(true);
        PushSpool s = spool(push, new AtomicBoolean(false), 100, 1000);
        PushService.Item minted = item("q", null, "1");
        PushService.Item named = item("q", "t-1", "2");
        assertTrue(s.databaseHealthy());
        List<PushService.Result> r = s.bufferDuringOutage(TENANT_A, List.of(minted, named),
                new SQLTransientConnectionException("no connection"));
        assertEquals(List.of("buffered", "buffered"), r.stream().map(PushService.Result::status).toList());
        assertEquals(minted.messageId(), r.get(0).messageId(), "the id fixed before the failed attempt");
        assertEquals(minted.messageId().toString(), r.get(0).transactionId());
        assertEquals(named.messageId(), r.get(1).messageId());
        assertFalse(s.databaseHealthy(), "an outage seen by the push route shows in the spool's health");
        assertTrue(s.outageInProgress(), "pushes go straight to the spool while it waits for the database");

        assertEquals(0, s.drain(Long.MAX_VALUE), "still down: nothing replayed");
        assertTrue(s.outageInProgress());
        push.down.set(false);
        assertEquals(2, s.drain(Long.MAX_VALUE));
        assertTrue(s.databaseHealthy());
        assertFalse(s.outageInProgress());
        // Replayed with the very ids the first attempt used, so a copy it committed is a duplicate.
        assertEquals(List.of(minted.messageId(), named.messageId()),
                push.items.stream().map(PushService.Item::messageId).toList());
        assertEquals(List.of(minted.messageId().toString(), "t-1"), push.txns());
        s.close();
    }
}
