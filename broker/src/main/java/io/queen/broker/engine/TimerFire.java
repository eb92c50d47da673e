package io.queen.broker.engine;

import io.queen.broker.config.TimerSettings;
import io.queen.broker.engine.timers.TimerService;
import io.queen.broker.lifecycle.Ticker;
import io.queen.broker.store.Database;
import io.queen.broker.store.TimerStore;
import io.queen.broker.store.TimerStore.Claimed;
import io.queen.broker.store.TimerStore.Key;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The timer fire (broker/DESIGN.md, Timers): due timers become messages. One pass probes, claims due
 * timers (SKIP LOCKED, leaderless: every broker runs it and they share the rows), then fires each
 * tenant's claims in one transaction through the {@link PartitionWriter}, the path every push takes:
 * hold the claimed rows (SKIP LOCKED, token and lease checked), provision the (queue, partition)s
 * by name, lock the partitions ascending and write one segment each with {@code log_push_one_v1}
 * (dedup on the timer's txn inside the queue's window), delete the delivered rows, commit, and tell
 * the {@link CommitListener} so parked consumers here and on peers wake at once. A failure puts the
 * claims into backoff; only a permanent one spends an attempt, and the fifth sends the timer to the
 * queue's DLQ under consumer group {@code __timer__}.
 */
public final class TimerFire {
    private static final Logger LOG = Logger.getLogger(TimerFire.class.getName());
    /** Rows one pass fires at most before it lets the loop breathe. */
    private static final int PASS_MAX_ROWS = 5_000;

    /** What a pass found, which is what the sweeper's sleep depends on. */
    public sealed interface Pass permits Fired, DueIn, Empty, Contended, Off {
    }

    /** Fired {@code timers} (delivered or found already in the log); the loop goes again soon. */
    public record Fired(int timers) implements Pass {
    }

    /** Nothing due; the earliest timer becomes visible in {@code ms}. */
    public record DueIn(long ms) implements Pass {
    }

    /** No timer at all. */
    public record Empty() implements Pass {
    }

    /** Timers were due but another broker claimed them first. */
    public record Contended() implements Pass {
    }

    /** The operator's fire switch is off. */
    public record Off() implements Pass {
    }

    private final Database database;
    private final PartitionWriter writer;
    private final CommitListener listener;
    private final TimerSettings settings;
    private final BooleanSupplier fireEnabled;
    private final SurfaceMetrics metrics;
    private final Ticker ticker;
    private int startShard = (int) (Math.random() * 64);

    /**
     * {@code metrics}: where fires, their lateness, failures and dead letters are counted;
     * {@code ticker}: what half the claim's lease, the end of a pass, is measured on.
     */
    public TimerFire(Database database, PushService push, CommitListener listener, TimerSettings settings,
                     BooleanSupplier fireEnabled, SurfaceMetrics metrics, Ticker ticker) {
        this.database = database;
        this.ticker = ticker;
        this.metrics = metrics;
        this.writer = push.writer();
        this.listener = listener;
        this.settings = settings;
        this.fireEnabled = fireEnabled;
    }

    /** One pass: probe, then claim and fire until nothing is due, the pass's budget or half the lease. */
    public Pass sweep() throws SQLException {
        if (!fireEnabled.getAsBoolean()) {
            return new Off();
        }
        Long due;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            due = TimerStore.dueInMs(c);
        }
        if (due == null) {
            return new Empty();
        }
        if (due > 0) {
            return new DueIn(due);
        }
        // Past half the lease, rows claimed now could be re-claimed elsewhere before our fire commits.
        long deadline = ticker.nanoTime() + settings.leaseMs() / 2 * 1_000_000L;
        int fired = 0;
        int claimed = 0;
        while (claimed < PASS_MAX_ROWS && ticker.nanoTime() - deadline < 0 && fireEnabled.getAsBoolean()) {
            List<Claimed> claims;
            try (Connection c = database.connection()) {
                c.setAutoCommit(true);
                startShard = (startShard + 1) % 64;
                claims = TimerStore.claim(c, startShard, settings.leaseMs(), settings.claimBatch());
            }
            if (claims.isEmpty()) {
                break;
            }
            claimed += claims.size();
            fired += fire(claims);
        }
        return claimed == 0 ? new Contended() : new Fired(fired);
    }

    /** Fires claimed timers, one transaction per tenant; the number delivered. */
    int fire(List<Claimed> claims) {
        Map<UUID, List<Claimed>> byTenant = new LinkedHashMap<>();
        claims.forEach(t -> byTenant.computeIfAbsent(t.tenant(), k -> new ArrayList<>()).add(t));
        int fired = 0;
        for (Map.Entry<UUID, List<Claimed>> e : byTenant.entrySet()) {
            List<Ready> ready = new ArrayList<>();
            for (Claimed t : e.getValue()) {
                try {
                    ready.add(new Ready(t, payloadOf(t)));
                } catch (IOException | RuntimeException bad) {
                    // Unreadable as stored: nothing a retry cures. It spends an attempt on its own.
                    failed(e.getKey(), List.of(new Ready(t, t.payload())), "the timer's payload is not zstd", true);
                }
            }
            fired += fireTenant(e.getKey(), ready, true);
        }
        return fired;
    }

    /** A claimed timer with the payload its frame carries (zstd undone; an envelope stays sealed). */
    record Ready(Claimed timer, byte[] payload) {
        Key key() {
            return new Key(timer.queue(), timer.timerKey());
        }
    }

    private byte[] payloadOf(Claimed t) throws IOException {
        return t.payloadZstd() ? TimerService.unzstd(t.payload(), Integer.MAX_VALUE - 16) : t.payload();
    }

    /**
     * One tenant's timers in one transaction. On a permanent failure of several (queue, partition)s
     * each is tried alone ({@code isolate}), so one poisoned destination does not hold the others back.
     */
    private int fireTenant(UUID tenant, List<Ready> ready, boolean isolate) {
        if (ready.isEmpty()) {
            return 0;
        }
        try {
            return fireOnce(tenant, ready);
        } catch (SQLException | RuntimeException e) {
            boolean transientFailure = TimerService.transientFailure(e);
            Map<String, List<Ready>> byDestination = new LinkedHashMap<>();
            ready.forEach(r -> byDestination.computeIfAbsent(r.timer().queue() + '\u0000' + r.timer().partition(),
                    k -> new ArrayList<>()).add(r));
            if (!transientFailure && isolate && byDestination.size() > 1) {
                LOG.warning("timer fire failed for " + byDestination.size() + " destinations at once ("
                        + e + "); firing them one by one");
                int fired = 0;
                for (List<Ready> one : byDestination.values()) {
                    fired += fireTenant(tenant, one, false);
                }
                return fired;
            }
            LOG.log(transientFailure ? Level.WARNING : Level.SEVERE, "timer fire failed for " + ready.size()
                    + " timer(s) of " + describe(byDestination) + (transientFailure ? " (transient, no attempt spent)" : ""), e);
            failed(tenant, ready, transientFailure ? "transient: " + e.getClass().getSimpleName()
                    : "fire failed: " + e.getClass().getSimpleName(), !transientFailure);
            return 0;
        }
    }

    private int fireOnce(UUID tenant, List<Ready> ready) throws SQLException {
        List<Key> keys = ready.stream().map(Ready::key).toList();
        List<UUID> tokens = ready.stream().map(r -> r.timer().token()).toList();
        List<PushPlan.Group> groups;
        List<Key> held;
        int stale;
        int duplicates = 0;
        long[] late;
        PartitionWriter.Batch batch = new PartitionWriter.Batch();
        try (Connection c = database.connection()) {
            c.setAutoCommit(false);
            try {
                // Timer rows first (SKIP LOCKED: never a waiter here), then queues and partitions.
                Set<Key> holding = TimerStore.hold(c, tenant, keys, tokens);
                List<Ready> mine = ready.stream().filter(r -> holding.contains(r.key())).toList();
                stale = ready.size() - mine.size();
                if (mine.isEmpty()) {
                    c.rollback();
                    metrics.fired(SurfaceMetrics.FireResult.STALE, stale);
                    return 0;
                }
                // A fired timer carries its scheduler's subject.
                List<PushService.Item> items = mine.stream().map(r -> new PushService.Item(r.timer().queue(),
                        r.timer().partition(), r.payload(), r.timer().txn(), null, r.timer().messageId(),
                        r.timer().producerSub())).toList();
                PushPlan plan = PushPlan.of(items);
                for (int i = 0; i < items.size(); i++) {
                    if (!plan.isRepeat(i)) {
                        PushPlan.Slot s = plan.answering(i);
                        s.sealedEncrypted = mine.get(i).timer().encrypted();
                    }
                }
                groups = plan.groups();
                writer.provision(c, tenant, groups);
                batch.add(groups);
                writer.writePartitions(c, batch, false);
                for (int i = 0; i < items.size(); i++) {
                    if (plan.isRepeat(i) || !"queued".equals(plan.answering(i).status)) {
                        duplicates++;
                    }
                }
                late = mine.stream().mapToLong(r -> r.timer().lateMs()).toArray();
                held = mine.stream().map(Ready::key).toList();
                // Every held timer is now in the log (queued, or already there by its txn): delete them.
                TimerStore.settle(c, tenant, held, Collections.nCopies(held.size(), true));
                c.commit();
                batch.committed();
            } catch (PartitionWriter.DuplicateInTransactionException e) {
                throw new IllegalStateException("unreachable: the fire reports duplicates", e);
            } catch (SQLException | RuntimeException e) {
                Database.rollbackAfter(c, e);
                throw e;
            } finally {
                Database.restoreAutoCommit(c);
            }
        }
        metrics.fired(SurfaceMetrics.FireResult.FIRED, held.size() - duplicates);
        metrics.fired(SurfaceMetrics.FireResult.DUPLICATE, duplicates);
        metrics.fired(SurfaceMetrics.FireResult.STALE, stale);
        metrics.sweptRows(SurfaceMetrics.SweepPhase.FIRE, held.size());
        for (long ms : late) {
            metrics.fireLateness(ms);
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (PushPlan.Group g : groups) {
            listener.committed(tenant, g.queue, g.partition);
        }
        ready.stream().filter(r -> held.contains(r.key())).forEach(r ->
                counts.merge(r.timer().queue() + "/" + r.timer().partition(), 1, Integer::sum));
        LOG.info("timers fired: " + held.size() + " (" + String.join(", ", counts.entrySet().stream()
                .map(en -> en.getKey() + "=" + en.getValue()).toList()) + ")");
        return held.size();
    }

    /** Puts timers into backoff; a permanent failure spends an attempt and the exhausted go to the DLQ. */
    private void failed(UUID tenant, List<Ready> ready, String error, boolean permanent) {
        metrics.fireFailed(permanent ? SurfaceMetrics.FireFailure.PERMANENT : SurfaceMetrics.FireFailure.TRANSIENT,
                ready.size());
        Map<Integer, List<Ready>> byAttempts = new LinkedHashMap<>();
        ready.forEach(r -> byAttempts.computeIfAbsent(permanent ? r.timer().attempts() : 0, k -> new ArrayList<>()).add(r));
        for (Map.Entry<Integer, List<Ready>> e : byAttempts.entrySet()) {
            int backoff = permanent
                    ? (int) Math.min((long) settings.backoffMinMs() << Math.min(e.getKey(), 30), settings.backoffMaxMs())
                    : settings.backoffMinMs();
            List<Ready> rows = e.getValue();
            try (Connection c = database.connection()) {
                c.setAutoCommit(true);
                List<Key> exhausted = TimerStore.fail(c, tenant, rows.stream().map(Ready::key).toList(),
                        rows.stream().map(r -> r.timer().token()).toList(), backoff, error, permanent,
                        settings.maxAttempts());
                for (Key k : exhausted) {
                    Ready r = rows.stream().filter(x -> x.key().equals(k)).findFirst().orElseThrow();
                    archive(c, tenant, r, error);
                }
            } catch (SQLException | RuntimeException f) {
                // Nothing to repair: the claims' lease ends and the timers come back on their own.
                LOG.log(Level.WARNING, "could not put " + rows.size() + " timer(s) into backoff", f);
            }
        }
    }

    private void archive(Connection c, UUID tenant, Ready r, String error) throws SQLException {
        String snapshot = new String(r.payload(), StandardCharsets.UTF_8);
        try {
            TimerService.MAPPER.readTree(snapshot);
        } catch (IOException | RuntimeException notJson) {
            snapshot = rawSnapshot(r.payload());
        }
        boolean archived;
        try {
            archived = TimerStore.dlq(c, tenant, r.key(), snapshot, settings.maxAttempts());
        } catch (SQLException e) {
            if (!io.queen.broker.store.SqlStates.isDataException(e)) {
                throw e;
            }
            // JSON PostgreSQL's jsonb refuses (an escaped NUL): the DLQ keeps the bytes instead of losing them.
            archived = TimerStore.dlq(c, tenant, r.key(), rawSnapshot(r.payload()), settings.maxAttempts());
        }
        if (archived) {
            metrics.timerDeadLettered();
            LOG.warning("timer " + r.timer().queue() + "/" + r.timer().partition() + " archived to the DLQ"
                    + " (consumer group __timer__) after " + settings.maxAttempts() + " failed fires: " + error);
        }
    }

    private static String rawSnapshot(byte[] payload) {
        return "{\"_raw_b64\":\"" + Base64.getEncoder().encodeToString(payload) + "\"}";
    }

    private static String describe(Map<String, List<Ready>> byDestination) {
        return String.join(", ", byDestination.keySet().stream().map(k -> k.replace('\u0000', '/')).toList());
    }

}
