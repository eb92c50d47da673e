package io.queen.broker.engine;

import io.queen.broker.config.EngineSettings.AutopilotMode;
import io.queen.broker.lifecycle.Ticker;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Pop autopilot ({@code autopilot=true}; broker/DESIGN.md, Pop path): a queue-level pop of a named group may leave
 * {@code partitions} and/or {@code batch} to the broker, which sizes them per (tenant, queue,
 * group) lane from what it already holds in memory. It asks the database nothing.
 *
 * <p>The width follows the partitions believed ready (the hot list's marked partitions), shared
 * among the lane's pops in flight on this broker. It widens at once to cover what is ready now,
 * so a burst is not drained one partition per round trip, and narrows only once the smoothed
 * ready count has fallen under half of it, so it does not flap between pops. It stays within
 * 1..64, the reference's bound on one claim. A lane idle for a second starts again from one. A
 * delegated batch is 100 ({@code QUEEN_POP_AUTOPILOT_BATCH}), what the clients sent before they
 * delegated it. A knob the pop sent is never touched.
 *
 * <p>In shadow mode ({@code QUEEN_POP_AUTOPILOT=shadow}, the reference's rollout position) the
 * lanes learn exactly as when on, but the pop is served with its own knobs or the defaults and
 * carries no echo; what autopilot would have chosen is logged, at most one line per window.
 */
public final class PopAutopilot {
    static final int WIDTH_CEILING = 64;
    static final long IDLE_NANOS = 1_000_000_000L;
    private static final double ALPHA = 0.25;
    private static final int MAX_LANES = 100_000;
    private static final long SHADOW_REPORT_NANOS = 10_000_000_000L;
    private static final Logger LOG = Logger.getLogger(PopAutopilot.class.getName());

    /** The knobs one attempt uses, echoed to the client as {@code "autopilot":{"partitions":..,"batch":..}}. */
    public record Plan(int partitions, int batch) {
    }

    private final AutopilotMode mode;
    private final int batch;
    private final long shadowReportNanos;
    private final Ticker ticker;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();
    private final AtomicLong shadowDecisions = new AtomicLong();
    private final AtomicLong lastShadowReport;

    private static final class Lane {
        int live;
        double ready = -1;
        int width = 1;
        long lastPlanNanos;
    }

    /**
     * @param mode  {@code QUEEN_POP_AUTOPILOT}: off ignores the parameter, as brokers before it did
     * @param batch the batch given to a pop that delegated it
     */
    public PopAutopilot(AutopilotMode mode, int batch) {
        this(mode, batch, SHADOW_REPORT_NANOS, Ticker.SYSTEM);
    }

    /**
     * @param shadowReportNanos the shortest gap between two shadow log lines
     * @param ticker            the clock of idle lanes and the shadow window
     */
    PopAutopilot(AutopilotMode mode, int batch, long shadowReportNanos, Ticker ticker) {
        this.mode = mode;
        this.batch = batch;
        this.shadowReportNanos = shadowReportNanos;
        this.ticker = ticker;
        this.lastShadowReport = new AtomicLong(ticker.nanoTime() - Long.MAX_VALUE / 2);
    }

    /** Whether pops that ask for autopilot get a lane (on and shadow). */
    public boolean active() {
        return mode != AutopilotMode.OFF;
    }

    /** Whether plans are only reported, never applied. */
    public boolean shadow() {
        return mode == AutopilotMode.SHADOW;
    }

    /**
     * Shadow mode: notes what the lane's pop would have claimed against what it claims, logging the
     * latest such pair with the count since the last line, at most once per window so a busy lane
     * cannot flood the log.
     *
     * @return whether a line was logged
     */
    public boolean reportShadow(String lane, Plan would, int claimsPartitions, int claimsBatch) {
        long decisions = shadowDecisions.incrementAndGet();
        long now = ticker.nanoTime();
        long last = lastShadowReport.get();
        if (now - last < shadowReportNanos || !lastShadowReport.compareAndSet(last, now)) {
            return false;
        }
        shadowDecisions.addAndGet(-decisions);
        LOG.info("pop autopilot (shadow): lane " + lane + " would claim partitions=" + would.partitions()
                + " batch=" + would.batch() + "; the pop claims partitions=" + claimsPartitions + " batch="
                + claimsBatch + " (" + decisions + " shadow decision" + (decisions == 1 ? "" : "s")
                + " since the last report)");
        return true;
    }

    /** A pop counted as in flight on its lane until closed. */
    public interface Live extends AutoCloseable {
        @Override
        void close();
    }

    /** Counts one pop of the lane as in flight until closed. */
    public Live enter(String lane) {
        Lane l = lanes.computeIfAbsent(lane, k -> new Lane());
        synchronized (l) {
            l.live++;
        }
        return () -> {
            synchronized (l) {
                l.live--;
            }
        };
    }

    /**
     * The knobs for one attempt of a pop of the lane.
     *
     * @param readyNow   partitions of the lane believed ready now
     * @param partitions the pop's own width, or null when delegated
     * @param ownBatch   the pop's own batch, or null when delegated
     */
    public Plan plan(String lane, int readyNow, Integer partitions, Integer ownBatch) {
        int width = partitions != null ? partitions : width(lane, readyNow);
        return new Plan(width, ownBatch != null ? ownBatch : batch);
    }

    private static int share(double ready, int live) {
        return (int) Math.clamp((long) Math.ceil(ready / live), 1, WIDTH_CEILING);
    }

    private int width(String lane, int readyNow) {
        if (lanes.size() > MAX_LANES) {
            lanes.entrySet().removeIf(e -> {
                synchronized (e.getValue()) {
                    return e.getValue().live == 0;
                }
            });
        }
        Lane l = lanes.computeIfAbsent(lane, k -> new Lane());
        synchronized (l) {
            long now = ticker.nanoTime();
            if (l.ready < 0 || now - l.lastPlanNanos > IDLE_NANOS) {
                l.ready = readyNow;
                l.width = 1;
            } else {
                l.ready = (1 - ALPHA) * l.ready + ALPHA * readyNow;
            }
            l.lastPlanNanos = now;
            int live = Math.max(1, l.live);
            int cover = share(readyNow, live);
            if (cover > l.width) {
                l.width = cover;
            } else if (l.width > 2 * l.ready / live) {
                l.width = share(l.ready, live);
            }
            return l.width;
        }
    }
}
