package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.KvSettings;
import io.queen.broker.engine.SurfaceMetrics;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.store.Database;
import io.queen.broker.store.KvStore;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The KV side of the sweeper (broker/DESIGN.md, KV sweeper and quotas): on every broker unless
 * QUEEN_SWEEPER=false, leaderless. Every QUEEN_KV_EXPIRE_EVERY_MS it prunes expired keys over the 64
 * shards, starting at a shard of its own that moves each cycle (brokers share the rows through the
 * prune's SKIP LOCKED), step after step until a step says done; every QUEEN_KV_USAGE_EVERY_MS it
 * measures each tenant's usage (skipped when another broker just did). It logs what it removed and
 * measured, and counts both in {@link SurfaceMetrics} (pruned rows, the backlog left, usage runs); a
 * failing step is logged and the loop goes on.
 */
public final class KvSweeper implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(KvSweeper.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int SHARDS = 64;
    /** Steps one cycle runs at most, so a large backlog is worked off over cycles rather than in one. */
    private static final int MAX_STEPS = 50;
    private static final long LOG_EVERY_MS = 60_000;

    private final Database database;
    private final KvSettings.Guard guard;
    private final SurfaceMetrics metrics;
    private final Thread thread;
    private volatile boolean running = true;
    private int startShard = ThreadLocalRandom.current().nextInt(SHARDS);
    private long nextUsageAt;
    private long pruned;
    private long lastLogAt;
    private long lastFailureLog;

    private KvSweeper(Database database, KvSettings.Guard guard, SurfaceMetrics metrics) {
        this.database = database;
        this.guard = guard;
        this.metrics = metrics;
        this.thread = BackgroundThread.create("queen-kv-sweeper", this::loop);
    }

    /** Starts the loop, or returns null when {@code sweeper} is false (QUEEN_SWEEPER=false). */
    public static KvSweeper start(Database database, KvSettings.Guard guard, boolean sweeper,
                                  SurfaceMetrics metrics) {
        if (!sweeper) {
            LOG.info("QUEEN_SWEEPER=false: this broker prunes no expired KV keys and measures no usage");
            return null;
        }
        KvSweeper s = new KvSweeper(database, guard, metrics);
        s.thread.start();
        return s;
    }

    private void loop() {
        while (running) {
            try {
                cycle();
            } catch (Exception e) {
                long now = System.currentTimeMillis();
                if (now - lastFailureLog > 10_000) {
                    lastFailureLog = now;
                    LOG.log(Level.WARNING, "KV sweep failed; retrying in " + guard.expireEveryMs() + " ms", e);
                }
            }
            try {
                Thread.sleep(guard.expireEveryMs());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One cycle: the prune until done (bounded), then the usage rollup when it is due. */
    void cycle() throws Exception {
        int[] shards = new int[SHARDS];
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = (startShard + i) % SHARDS;
        }
        startShard = (startShard + 1) % SHARDS;
        long backlog = 0;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            for (int step = 0; step < MAX_STEPS && running; step++) {
                JsonNode r = MAPPER.readTree(KvStore.expireStep(c, shards, guard.expireBatch()));
                long deleted = r.path("deleted").asLong();
                pruned += deleted;
                backlog = r.path("backlog").asLong();
                metrics.sweptRows(SurfaceMetrics.SweepPhase.KV_EXPIRE, deleted);
                metrics.kvBacklog(new SurfaceMetrics.KvBacklog(backlog, r.path("backlogCapped").asBoolean()));
                if (r.path("done").asBoolean() || deleted == 0) {
                    break;
                }
            }
            long now = System.currentTimeMillis();
            if (pruned > 0 && now - lastLogAt >= LOG_EVERY_MS) {
                LOG.info("KV sweeper: pruned " + pruned + " expired keys since the last report; "
                        + backlog + " expired keys left in the table");
                pruned = 0;
                lastLogAt = now;
            }
            if (now >= nextUsageAt) {
                // Skipped when another broker measured within most of the period.
                JsonNode u = MAPPER.readTree(KvStore.usageStep(c, (int) Math.min(Integer.MAX_VALUE,
                        guard.usageEveryMs() * 9 / 10)));
                nextUsageAt = now + guard.usageEveryMs();
                metrics.usageRun(u.path("skipped").asBoolean());
                metrics.sweptRows(SurfaceMetrics.SweepPhase.USAGE, u.path("tenants").asLong());
                if (!u.path("skipped").asBoolean()) {
                    LOG.info("KV sweeper: measured KV and timer usage of " + u.path("tenants").asLong() + " tenants");
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        BackgroundThread.stop(thread, Duration.ofSeconds(5), "a KV sweep in flight");
    }
}
