package io.queen.broker.jobs;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.config.KvSettings;
import io.queen.broker.engine.kv.KvQuota;
import io.queen.broker.lifecycle.BackgroundThread;
import io.queen.broker.store.Database;
import io.queen.broker.store.KvStore;

import java.sql.Connection;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The quota poll (broker/DESIGN.md, KV sweeper and quotas): every broker, sweeper or not, reads each
 * tenant's limits and measured usage into its {@link KvQuota} once before it serves and then every
 * QUEEN_KV_QUOTA_REFRESH_MS. A failed poll keeps the last view and is logged.
 */
public final class KvQuotaRefresh implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(KvQuotaRefresh.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final Database database;
    private final KvQuota quota;
    private final KvSettings.Guard guard;
    private final Thread thread;
    private volatile boolean running = true;

    private KvQuotaRefresh(Database database, KvQuota quota, KvSettings.Guard guard) {
        this.database = database;
        this.quota = quota;
        this.guard = guard;
        this.thread = BackgroundThread.create("queen-kv-quota", this::loop);
    }

    /** Polls once now (so the first request meets the grants), then keeps polling in the background. */
    public static KvQuotaRefresh start(Database database, KvQuota quota, KvSettings.Guard guard) {
        KvQuotaRefresh r = new KvQuotaRefresh(database, quota, guard);
        try {
            r.refresh();
        } catch (Exception e) {
            LOG.log(Level.WARNING, "the first KV quota poll failed; retrying in " + guard.quotaRefreshMs() + " ms", e);
        }
        r.thread.start();
        return r;
    }

    /** One poll. */
    public void refresh() throws Exception {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            quota.adopt(MAPPER.readTree(KvStore.quotaRefresh(c, guard.maxTenants())), System.currentTimeMillis());
        }
    }

    private void loop() {
        while (running) {
            try {
                Thread.sleep(guard.quotaRefreshMs());
                refresh();
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                LOG.log(Level.WARNING, "KV quota poll failed; keeping the last view", e);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        BackgroundThread.stop(thread, Duration.ofSeconds(5), "a KV quota poll in flight");
    }
}
