package io.queen.broker.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Pop autopilot (spec 3, {@code autopilot=true}): a queue-level pop of a named group may leave
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
 */
public final class PopAutopilot {
    static final int WIDTH_CEILING = 64;
    static final long IDLE_NANOS = 1_000_000_000L;
    private static final double ALPHA = 0.25;
    private static final int MAX_LANES = 100_000;

    /** The knobs one attempt uses, echoed to the client as {@code "autopilot":{"partitions":..,"batch":..}}. */
    public record Plan(int partitions, int batch) {
    }

    private final boolean enabled;
    private final int batch;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    private static final class Lane {
        int live;
        double ready = -1;
        int width = 1;
        long lastPlanNanos;
    }

    /**
     * @param enabled {@code QUEEN_POP_AUTOPILOT}: off ignores the parameter, as brokers before it did
     * @param batch   the batch given to a pop that delegated it
     */
    public PopAutopilot(boolean enabled, int batch) {
        this.enabled = enabled;
        this.batch = batch;
    }

    public boolean enabled() {
        return enabled;
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
            long now = System.nanoTime();
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
